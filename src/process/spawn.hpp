// src/process/spawn.hpp: start one command inside a containment unit.
//
// The child is created with a vfork-style clone (shared memory, parent
// suspended until exec), like posix_spawn, so starting a command costs no
// page-table copy of the supervisor. Between clone and exec the child makes
// raw system calls only: it resets signals, joins its unit, applies the
// hardening options, wires stdio and execs. A failure before exec is written
// to a close-on-exec pipe, so the parent learns it before returning.
//
// A confined start goes through a vfork-style starter that enters the shared
// user and network namespaces (namespace_pool.hpp) and clones the run's
// first process into its new pid, mount, ipc and uts namespaces as a child
// of the supervisor. For a pid namespace that process is a small init of
// ours (a real fork: it outlives the start) that clone-execs the command, forwards
// SIGTERM to the whole namespace, reaps orphans, and exits with the
// command's status once the command exits (the kernel then kills whatever is
// left in the namespace).
#pragma once

#include <sys/types.h>

#include <array>
#include <stdexcept>
#include <string>
#include <vector>

#include "corral/process.hpp"
#include "process/fd.hpp"
#include "process/namespace_pool.hpp"

namespace corral::process {

// SpawnError: the command could not be started (maps to `unavailable`).
class SpawnError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SpawnRequest {
  UnitKind unit = UnitKind::process_group;
  int cgroup_procs_fd = -1;  // cgroup unit: the leaf's cgroup.procs, open for writing
  // cgroup unit: the leaf's directory. A confined start clones its first
  // process straight into it (clone3 CLONE_INTO_CGROUP: no migration, whose
  // RCU grace period costs milliseconds); without it, or where the kernel
  // refuses, that process writes "0" to cgroup_procs_fd.
  int cgroup_dir_fd = -1;
  int stdout_fd = -1;  // write ends the command gets as fd 1 and 2
  int stderr_fd = -1;
  int stdin_fd = -1;  // read end the command gets as fd 0; -1 means /dev/null
  // Resource-limit cgroups to join besides the unit's (cgroup v1 pids,
  // memory, cpu leaves): each an open `cgroup.procs`; the child writes "0"
  // to every one before anything else. -1 entries are skipped.
  std::array<int, 3> limit_cgroup_procs_fds{-1, -1, -1};
};

struct Spawned {
  pid_t pid = 0;   // the command, or the pid namespace's init
  UniqueFd pidfd;  // readable once `pid` has exited
  // The pooled network namespace the run is in, if any: the unit gives it
  // back once it is empty.
  NetworkLease network;
};

// The environment strings `hardening` gives a command (see
// Hardening::environment_allow): never any CORRAL_* variable.
std::vector<std::string> command_environment(const Hardening& hardening);

// Resolves argv[0] (absolute, relative to the working directory, or searched
// in PATH). Throws SpawnError when there is no such executable.
std::string resolve_executable(const Command& command);

// Starts `command` as described above. Throws SpawnError (with the stage and
// errno) when it could not start; nothing is left running in that case.
Spawned spawn(const Command& command, const std::string& executable, const SpawnRequest& request);

// True iff this process may create a pid namespace (probes with a child
// that exits at once).
bool pid_namespace_available();

}  // namespace corral::process
