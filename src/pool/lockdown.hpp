// src/pool/lockdown.hpp: how a `corral worker` process locks itself down.
//
// Two steps, because the kernel allows some protections only while the
// process is single-threaded and others only make sense once V8 has done the
// file and thread work it needs at start:
//
//   1. enter_namespaces(): at the very start of `corral worker`, before V8
//      starts any thread. New user, network and (through one fork) pid
//      namespaces, each where the kernel allows it.
//   2. lock_down(): after V8 is initialised and one warm-up run is done,
//      before the first execution: parent-death signal, every fd but the IPC
//      socket closed, rlimits, PR_SET_NO_NEW_PRIVS, the seccomp allow-list.
//
// docs/security.md is the policy in prose, with why each syscall is allowed.
#pragma once

#include <string>
#include <vector>

namespace corral::pool {

// Protections: which protections are active in this process (or, from
// probe_protections, which this machine allows).
struct Protections {
  bool user_namespace = false;
  bool network_namespace = false;
  bool pid_namespace = false;
  bool parent_death_signal = false;
  bool fds_closed = false;
  bool rlimits = false;
  bool no_new_privs = false;
  bool seccomp = false;
  // One line per protection that is not active, saying why ("user
  // namespaces: unshare: Operation not permitted").
  std::vector<std::string> notes;
};

// {"user_namespace":true,...,"notes":[...]}
std::string to_json(const Protections& protections);

// Step 1. Call first thing in the worker, single-threaded. Returns in the
// process that goes on to be the worker (after the pid-namespace fork, the
// child; the parent stays behind as a small reaper that forwards signals and
// exits with the child's status, and never returns). Failures to enter a
// namespace are recorded in `protections.notes`, not thrown.
void enter_namespaces(Protections& protections);

// Step 2. Closes every fd except `keep_fd` (and 0-2, pointed at /dev/null),
// sets rlimits, no_new_privs and the seccomp filter. Throws
// std::runtime_error if no_new_privs or seccomp cannot be applied: a worker
// that cannot lock down must not run guests.
void lock_down(int keep_fd, Protections& protections);

// For `corral check`: what this machine allows, found by running both steps
// in a short-lived child process.
Protections probe_protections();

}  // namespace corral::pool
