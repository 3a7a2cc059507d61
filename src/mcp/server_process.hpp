// src/mcp/server_process.hpp: a stdio upstream MCP server's process tree,
// started through the process layer (process::spawn) under the same
// confinement as a bound command, in a containment unit of its own.
//
// Each upstream entry gets one ServerContainment (the cgroup directories its
// starts share); each start of its server is one ServerProcess.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "corral/mcp.hpp"
#include "corral/process.hpp"
#include "process/cgroup.hpp"
#include "process/limits.hpp"
#include "process/unit.hpp"

namespace corral::mcp {

// The Hardening a stdio upstream runs with: its entry's confinement, and its
// env.allow / env.set as the environment rule (never CORRAL_*).
process::Hardening upstream_hardening(const Upstream& upstream);

// ServerContainment: one upstream's cgroup parent and limit cgroups, reused
// by every start of its server (as a Supervisor's are by its runs), and the
// unit kind its starts get: a cgroup v2 leaf where this process may create
// one, else a pid namespace, else a process group (the strongest first, as
// process::Supervisor chooses). Shared by the starts (shared_ptr): a start's
// tree may be stopped after the upstream client was dropped.
class ServerContainment {
 public:
  explicit ServerContainment(const process::Hardening& hardening);
  ServerContainment(const ServerContainment&) = delete;
  ServerContainment& operator=(const ServerContainment&) = delete;

  const process::Hardening& hardening() const { return hardening_; }
  process::UnitKind unit() const { return unit_; }
  // What this host enforces of the profile: the containment unit, then
  // process::confinement_protections, then the resource limits.
  const std::vector<process::Protection>& protections() const { return protections_; }

 private:
  friend class ServerProcess;
  process::Hardening hardening_;
  process::UnitKind unit_ = process::UnitKind::process_group;
  std::optional<process::CgroupParent> parent_;
  std::optional<process::CgroupLeafPool> leaves_;
  std::optional<process::LimitCgroups> limits_;
  std::vector<process::Protection> protections_;
};

// ServerProcess: one running server. Its stdin and stdout are the given
// pipe ends (dup'ed into the child), its stderr corral's.
//
// Not thread-safe except pid(): stop() is called by one thread at a time.
class ServerProcess {
 public:
  // Starts `argv` (argv[0] resolved in corral's PATH). Throws
  // process::SpawnError (with the stage and errno) when it cannot start,
  // nothing left running then.
  ServerProcess(std::shared_ptr<ServerContainment> containment,
                const std::vector<std::string>& argv, int stdin_fd, int stdout_fd);
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // The unit's leader: the server, or the pid namespace's init.
  pid_t pid() const noexcept { return pid_; }
  // Stops the whole tree: SIGTERM to every process of the unit, SIGKILL to
  // every one still there after `grace`, then waits (bounded) until the unit
  // is empty and reaps it. Returns how the leader ended ("exit 0",
  // "signal 9"; "" if it could not be reaped). Idempotent.
  std::string stop(std::chrono::milliseconds grace);

 private:
  bool wait_empty(std::chrono::steady_clock::time_point deadline);

  std::shared_ptr<ServerContainment> containment_;
  std::unique_ptr<process::Unit> unit_;
  std::unique_ptr<process::LimitLeaf> limit_leaf_;
  pid_t pid_ = 0;
  bool stopped_ = false;
  std::string exit_;
};

}  // namespace corral::mcp
