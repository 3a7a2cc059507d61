// src/process/orphans.hpp: reaping the zombies nothing else will.
//
// A process that is PID 1 (corral serve as a container's entrypoint) or a
// child subreaper inherits every orphan below it: a pooled worker whose
// pid-namespace reaper was killed, a bound command's daemonised grandchild.
// Each becomes a zombie that only this process can reap. A blanket
// `waitpid(-1)` would steal the children the pool, the supervisor and MCP
// upstreams wait for (and lose their exit statuses), so the rule is:
// every owner in corral holds a pidfd for its child from spawn to reap; a
// zombie child for which this process holds no pidfd, seen on two sweeps
// in a row (so a child spawned a moment ago whose owner is opening its
// pidfd is never taken), is an orphan, and is reaped.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace corral::process {

// Children of every thread of `pid` (a child's parent is the thread that
// spawned it), from /proc/PID/task/*/children; 0 is this process.
std::vector<pid_t> children_of(pid_t pid = 0);

// `pid`'s state letter from /proc/PID/stat ("R", "S", "Z", ...), or "" when
// there is no such process (gone, or reaped).
std::string process_state(pid_t pid);

// One pass of the rule above. `suspects` carries the zombies without a
// pidfd seen on the previous pass; returns how many were reaped.
std::size_t reap_orphans(std::set<pid_t>& suspects);

// Makes this process a child subreaper (so orphans of its descendants come
// here, not to the host's init) and sweeps every `interval` on its own
// thread until destroyed.
class OrphanReaper {
 public:
  explicit OrphanReaper(std::chrono::milliseconds interval = std::chrono::milliseconds(500));
  ~OrphanReaper();
  OrphanReaper(const OrphanReaper&) = delete;
  OrphanReaper& operator=(const OrphanReaper&) = delete;

  std::uint64_t reaped() const;

 private:
  void loop(std::chrono::milliseconds interval);

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::uint64_t reaped_ = 0;
  std::thread thread_;
};

}  // namespace corral::process
