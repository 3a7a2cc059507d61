// src/process/limits.hpp: a run's resource limits (ResourceLimits) on its
// processes as a whole, through cgroup controllers, and the start-up sweep of
// the cgroup directories a dead supervisor left behind.
//
// Mechanism, per limit, strongest first:
//   - cgroup v2: the unit's own leaf, when the supervisor's cgroup2 parent has
//     the controller (pids, memory, cpu) enabled for its children (the
//     CgroupParent enables what its cgroup.controllers offers);
//   - cgroup v1: the `pids`, `memory`, `cpu` hierarchies when mounted and
//     writable: per supervisor a `corral-<pid>-<n>` directory under this
//     process's own v1 cgroup in each, per run a leaf (`run-<n>`) the child
//     joins right after its unit (SpawnRequest::limit_cgroup_procs_fds);
//   - otherwise not enforced (memory falls back to RLIMIT_AS, which binds each
//     process on its own, not the run).
// Leaves are reused: an emptied leaf goes back to a free list (at most
// `slots` long) and gets its limits re-written when taken again.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "corral/process.hpp"
#include "process/cgroup.hpp"
#include "process/fd.hpp"

namespace corral::process {

enum class LimitController { pids = 0, memory = 1, cpu = 2 };

// One v1 controller hierarchy: where it is mounted and our own cgroup in it.
struct V1Hierarchy {
  std::string own;  // "/sys/fs/cgroup/pids" + our path
};

// LimitLeaf: one run's v1 leaves (one per controller the run needs).
class LimitLeaf {
 public:
  ~LimitLeaf();
  LimitLeaf(const LimitLeaf&) = delete;
  LimitLeaf& operator=(const LimitLeaf&) = delete;

  // cgroup.procs of each controller's leaf, open for writing (-1: none).
  std::array<int, 3> procs_fds() const;
  // Closes the write ends once the child is in.
  void close_procs();
  // True when no leaf lists a process.
  bool empty() const;
  // SIGKILL to every listed process.
  void kill_all() const;
  // The memory leaf saw an OOM kill since this run took it.
  bool oom_killed() const;
  // Highest pids.current seen is not tracked by v1; current count, or -1.
  long pids_current() const;
  std::string describe() const;

 private:
  friend class LimitCgroups;
  LimitLeaf() = default;
  std::array<std::string, 3> paths_;  // empty: controller unused
  std::array<UniqueFd, 3> procs_;
  std::uint64_t oom_baseline_ = 0;
  std::uint64_t failcnt_baseline_ = 0;
};

// LimitCgroups: one supervisor's v1 limit directories and its free list.
class LimitCgroups {
 public:
  // Probes the v1 hierarchies for the controllers v2 lacks and creates the
  // per-supervisor directory in each (one that refuses it is not used).
  LimitCgroups(int slots, V2Controllers v2);
  ~LimitCgroups();
  LimitCgroups(const LimitCgroups&) = delete;
  LimitCgroups& operator=(const LimitCgroups&) = delete;

  // One entry per limit `limits` asks for: mechanism or why not.
  std::vector<Protection> protections(const ResourceLimits& limits) const;
  // True when `controller` is enforced by v2 or v1 here.
  bool enforces(LimitController controller) const {
    return v2_has(controller) || v1_has(controller);
  }
  // The names of the limits asked for that nothing here enforces.
  std::vector<std::string> unenforced(const ResourceLimits& limits) const;

  // Writes the v2 limits into the unit's leaf directory (when v2 enforces
  // any); throws std::system_error on a write that fails.
  void apply_v2(const std::string& leaf, const ResourceLimits& limits) const;
  // A v1 leaf set (new or reused) with `limits` written, or nullptr when no
  // v1 controller is needed. Throws std::system_error.
  std::unique_ptr<LimitLeaf> acquire(const ResourceLimits& limits);
  // Returns an emptied leaf to the free list (or removes it). A leaf that is
  // not empty is refused (false): the caller keeps it until it is.
  bool release(std::unique_ptr<LimitLeaf>& leaf);

  // Directories of the free list and live leaves (for tests).
  std::size_t free_leaves() const;

 private:
  bool v1_has(LimitController controller) const;
  bool v2_has(LimitController controller) const;
  const std::string& parent(LimitController controller);
  void write_limits(LimitLeaf& leaf, const ResourceLimits& limits) const;

  int slots_;
  V2Controllers v2_;
  std::array<std::optional<V1Hierarchy>, 3> v1_;
  std::array<std::string, 3> parents_;  // created by the constructor
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<LimitLeaf>> free_;
};

// True when `limits` asks for anything.
bool any_limit(const ResourceLimits& limits);

// The start-up sweep: removes `corral-<pid>-<n>` directories under our own
// cgroup (v2 and the v1 pids, memory, cpu hierarchies) whose <pid> is dead
// or was reused by a process started after the directory, killing what they
// hold first. Runs its sweep once per process unless `force`. Returns how
// many directories it removed.
std::size_t sweep_stale_cgroups(bool force = false);

// This process's own cgroup directory in the v1 hierarchy of `controller`
// ("/sys/fs/cgroup/pids/"), or nullopt when not mounted or not writable.
std::optional<std::string> own_cgroup_v1_directory(const std::string& controller);

}  // namespace corral::process
