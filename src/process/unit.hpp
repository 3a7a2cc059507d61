// src/process/unit.hpp: a containment unit for one run, behind one interface
// whatever the kernel mechanism (cgroup leaf, pid namespace, process group).
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "corral/process.hpp"
#include "process/cgroup.hpp"
#include "process/spawn.hpp"

namespace corral::process {

// Unit: one run's processes. Not thread-safe: used by the run's thread, then
// (after cleanup_failed) by the supervisor's re-check thread only.
//
// Invariant: a unit never signals anything after it was seen empty, and it
// only reports empty once the leader has been reaped.
class Unit {
 public:
  virtual ~Unit() = default;

  // Fills the unit's part of the spawn request.
  virtual void prepare(SpawnRequest& request) { request.unit = kind(); }
  // Records the started leader (takes its pidfd).
  virtual void started(Spawned spawned);

  virtual UnitKind kind() const = 0;
  // Asks every process to stop (SIGTERM).
  virtual void terminate() = 0;
  // Forces every process to stop (SIGKILL).
  virtual void kill_all() = 0;
  // True once no live process remains (reaps what it must first).
  virtual bool empty() = 0;
  // A descriptor that signals (POLLPRI) when emptiness may have changed; -1.
  virtual int event_fd() const { return -1; }
  // CPU seconds the unit used; best effort.
  virtual double cpu_seconds() const;
  // "cgroup /sys/fs/cgroup/...": for Status and messages.
  virtual std::string describe() const = 0;
  // Removes kernel objects (or returns the cgroup leaf to its pool); call
  // once empty. A network namespace is handed on only if the leader (the
  // pid namespace's init, whose exit empties the namespace) was reaped.
  void release() {
    release_resources();
    if (leader_reaped_) network_.give_back();
    network_ = NetworkLease();
  }
  // The cgroup v2 leaf directory of a cgroup unit; empty otherwise.
  virtual std::string cgroup_path() const { return {}; }
  // OOM kills the unit's own cgroup counted (memory.events); 0 if none.
  virtual std::uint64_t oom_kills() const { return 0; }

  pid_t leader() const { return leader_; }
  // Readable once the leader exited; -1 once reaped.
  int leader_fd() const { return leader_reaped_ ? -1 : pidfd_.get(); }
  // Reaps the leader if it has exited; true once reaped.
  bool reap_leader();
  bool leader_reaped() const { return leader_reaped_; }
  // The leader's wait status (valid once reaped) and resource usage.
  int leader_status() const { return leader_status_; }
  const struct rusage& leader_usage() const { return leader_usage_; }

 protected:
  // Records a reaped leader (for units that reap by group).
  void leader_reaped_with(int status, const struct rusage& usage);
  virtual void release_resources() {}

  pid_t leader_ = 0;
  UniqueFd pidfd_;
  bool leader_reaped_ = false;
  int leader_status_ = 0;
  struct rusage leader_usage_ {};
  NetworkLease network_;
};

// Creates an empty unit of `kind`. For cgroup, `leaves` must be set (the
// unit takes a leaf from it and gives it back on release). Throws SpawnError
// if the unit cannot be made.
std::unique_ptr<Unit> make_unit(UnitKind kind, CgroupLeafPool* leaves);

}  // namespace corral::process
