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
//
// After the fork the worker is pid 1 of its namespace: the kernel drops
// signals with the default action that reach an init, so this installs
// SIGTERM/SIGINT/SIGHUP/SIGQUIT handlers that _exit(128 + signal); install
// your own afterwards for a graceful stop. The reaper closes every fd above
// 2 (the pool sees EOF as soon as the worker dies) and exits with the
// worker's exit status, or 128 + signal (159 for a policy kill, SIGSYS).
// Both the reaper and the worker carry PR_SET_PDEATHSIG(SIGKILL); Linux
// fires it when the parent *thread* exits, so spawn workers from a thread
// that lives as long as the pool.
void enter_namespaces(Protections& protections);

// Step 2. Sets the parent-death signal, points 0 and 1 at /dev/null, keeps
// 2 (V8's fatal messages and sanitizer reports go there; the spawner chose
// it) and `keep_fd`, closes every other fd, sets rlimits (core 0, 64 open
// files, threads in our own user namespace), no_new_privs and the seccomp
// allow-list on every thread. Throws std::runtime_error if no_new_privs or
// seccomp cannot be applied: a worker that cannot lock down must not run
// guests.
//
// Afterwards: no open(), no new sockets or processes (clone without
// CLONE_THREAD kills the process), signals only to this process, ioctl
// answers ENOTTY. Create any eventfd/pipe/epoll before or after (allowed),
// but never leave with exit() or by returning from main: use _exit().
// Under LeakSanitizer, exit() would fork a tracer, which the policy kills.
void lock_down(int keep_fd, Protections& protections);

// For `corral check`: what this machine allows, found by running both steps
// in a short-lived forked child that reports back over a pipe (bounded at
// 10 s). The caller must be single-threaded and must not have started V8:
// a fork of a multi-threaded process may deadlock, and the kernel refuses
// a user namespace to a multi-threaded process.
Protections probe_protections();

}  // namespace corral::pool
