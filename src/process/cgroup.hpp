// src/process/cgroup.hpp: the cgroup v2 pieces the supervisor needs: find a
// writable hierarchy, create a per-supervisor parent and per-run leaves,
// read `cgroup.events` and `cpu.stat`, kill through `cgroup.kill`.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "process/fd.hpp"

namespace corral::process {

// The directory of this process's own cgroup on the first cgroup2 mount in
// /proc/mounts ("/sys/fs/cgroup/unified/"), or nullopt if there is none.
std::optional<std::string> own_cgroup2_directory();

// The cgroup v2 controllers a CgroupParent enabled for its leaves.
struct V2Controllers {
  bool pids = false;
  bool memory = false;
  bool cpu = false;
};

// CgroupParent: a directory created for one supervisor, holding its leaves.
// Removed (with any empty leaves) on destruction. It holds no process, so it
// may enable controllers for its leaves: it enables whichever of pids, memory
// and cpu its own cgroup.controllers offers.
class CgroupParent {
 public:
  // Creates `<base>/corral-<pid>-<n>` (base: own_cgroup2_directory() when
  // empty). nullopt if cgroup2 is absent, not writable, or lacks cgroup.kill.
  static std::optional<CgroupParent> create(const std::string& base);

  CgroupParent(CgroupParent&& other) noexcept
      : path_(std::exchange(other.path_, {})), controllers_(other.controllers_) {}
  CgroupParent& operator=(CgroupParent&&) = delete;
  CgroupParent(const CgroupParent&) = delete;
  ~CgroupParent();

  const std::string& path() const { return path_; }
  V2Controllers controllers() const { return controllers_; }

 private:
  explicit CgroupParent(std::string path) : path_(std::move(path)) {}
  std::string path_;
  V2Controllers controllers_;
};

// CgroupLeaf: one run's cgroup. Created empty; the child moves itself in by
// writing "0" to `procs_fd()` before exec.
class CgroupLeaf {
 public:
  // Creates `<parent>/run-<n>`. Throws std::system_error on failure.
  static CgroupLeaf create(const std::string& parent);
  CgroupLeaf(CgroupLeaf&& other) noexcept
      : path_(std::exchange(other.path_, {})),
        procs_(std::move(other.procs_)),
        events_(std::move(other.events_)),
        removed_(other.removed_) {}
  CgroupLeaf& operator=(CgroupLeaf&&) = delete;
  ~CgroupLeaf();

  const std::string& path() const { return path_; }
  int procs_fd() const { return procs_.get(); }
  int events_fd() const { return events_.get(); }
  // Closes the write fd once the child is in (it must not leak to others).
  void close_procs() { procs_.reset(); }
  // Re-opens cgroup.procs for a reused leaf; false on failure.
  bool reopen_procs();
  // oom_kill from memory.events (0 when the memory controller is off).
  std::uint64_t oom_kills() const;

  // True iff cgroup.events says "populated 0".
  bool empty() const;
  // SIGKILL to every process in the leaf (cgroup.kill); errno or 0.
  int kill_all() const;
  // Sends `signal` to every pid listed in cgroup.procs.
  void signal_all(int signal) const;
  // usage_usec from cpu.stat, in seconds; nullopt if unreadable.
  std::optional<double> cpu_seconds() const;
  // rmdir; true on success (only possible once empty).
  bool remove();

 private:
  CgroupLeaf(std::string path, UniqueFd procs, UniqueFd events)
      : path_(std::move(path)), procs_(std::move(procs)), events_(std::move(events)) {}
  std::string path_;
  UniqueFd procs_;
  UniqueFd events_;
  bool removed_ = false;
};

// CgroupLeafPool: emptied leaves kept for the next run (at most `keep`),
// instead of an rmdir and a mkdir per run. A leaf taken again is checked
// empty (populated 0, no pid listed), its cgroup.procs re-opened and its
// cgroup.events re-read (which re-arms POLLPRI); the caller re-writes limits.
class CgroupLeafPool {
 public:
  CgroupLeafPool(std::string parent, std::size_t keep) : parent_(std::move(parent)), keep_(keep) {}
  // A free leaf, or a new one. Throws std::system_error.
  CgroupLeaf take();
  // Keeps `leaf` if it is empty and there is room; removes it otherwise.
  void give(CgroupLeaf&& leaf);
  std::size_t free_leaves() const;

 private:
  std::string parent_;
  std::size_t keep_;
  mutable std::mutex mutex_;
  std::vector<CgroupLeaf> free_;
};

}  // namespace corral::process
