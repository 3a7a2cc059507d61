// src/sandbox/ruby/helper.hpp: the process a Ruby sandbox runs its guests in.
//
// mruby as Debian builds it has no interrupt hook: a guest in `loop {}`
// can only be stopped by ending the thread's process. So a Ruby Sandbox
// runs its guests in a helper process, the program corral-ruby-helper
// (helper_main.cc), started with posix_spawn (no bare fork of the host: it
// holds nothing of the host's memory, locks or threads) from one long-lived
// spawner thread, so that its parent-death signal fires only when the host
// process ends. It gets its socket as fd 3 and a memfd with the run
// counters as fd 4, maps them, closes fd 4, locks itself down (no_new_privs
// and the pooled workers' seccomp allow-list) and then says hello; it talks
// over the socketpair in wire.hpp's frames.
//
// Where the program is found, first match wins (helper_path):
//   1. $CORRAL_RUBY_HELPER, when set (the run fails unavailable if it is
//      not an executable file);
//   2. beside the running executable: DIR/corral-ruby-helper, then
//      DIR/../libexec/corral/corral-ruby-helper (an installed bin/corral,
//      or an embedder's program installed into the same prefix);
//   3. the build tree's own helper, only for a program that lives in that
//      build tree (tests, build/.../corral);
//   4. the compiled-in install path, CMAKE_INSTALL_FULL_LIBEXECDIR/corral/
//      corral-ruby-helper of the build that made the library.
//
// Cost: one posix_spawn + exec per helper (spawned on the first run,
// reused, replaced after a run that was killed or that abandoned its
// state), then one request and one reply frame per run, a frame per output
// write and two per tool call. The helper opens the next run's mruby state
// while it is idle.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "sandbox/ruby/wire.hpp"

namespace corral::sandbox::ruby {

// The helper program's path by the rules above; empty with `error` naming
// the places looked at when there is none.
std::string helper_path(std::string& error);

class HelperProcess {
 public:
  // Exit statuses of a helper that ran no guest.
  static constexpr int kExitProtocol = 3;    // a frame it could not read
  static constexpr int kExitNoLockdown = 5;  // no no_new_privs or seccomp
  static constexpr int kExitMismatch = 6;    // another build's protocol
  static constexpr int kExitNoThread = 7;    // could not start its thread

  // Starts a helper; nullptr with `error` set when it cannot. The helper
  // may still fail to lock down: its hello frame (or its exit) says so.
  static std::unique_ptr<HelperProcess> spawn(std::string& error);
  // Kills and reaps the helper if it is still there.
  ~HelperProcess();
  HelperProcess(const HelperProcess&) = delete;
  HelperProcess& operator=(const HelperProcess&) = delete;

  int fd() const noexcept { return fd_; }
  pid_t pid() const noexcept { return pid_; }
  Counters& counters() noexcept { return *counters_; }

  // SIGKILL, then reap. Returns the CPU seconds the helper used in total,
  // in `signal` the signal that ended it (0 if it exited) and in
  // `exit_status` its exit status (-1 if a signal ended it).
  double kill_and_reap(int* signal = nullptr, int* exit_status = nullptr);
  // Reaps a helper that is exiting on its own (after its socket closed).
  double reap(int* signal = nullptr, int* exit_status = nullptr);

 private:
  HelperProcess(pid_t pid, int fd, Counters* counters) : pid_(pid), fd_(fd), counters_(counters) {}
  pid_t pid_;
  int fd_;
  Counters* counters_;
  bool reaped_ = false;
};

}  // namespace corral::sandbox::ruby
