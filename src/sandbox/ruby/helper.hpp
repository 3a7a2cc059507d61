// src/sandbox/ruby/helper.hpp: the process a Ruby sandbox runs its guests in.
//
// mruby as Debian builds it has no interrupt hook: a guest in `loop {}`
// can only be stopped by ending the thread's process. So a Ruby Sandbox
// runs its guests in a helper process: a fork() (without exec) of the host,
// made from one long-lived forker thread, that only runs mruby and talks
// over a socketpair (wire.hpp). The child never touches V8 or any host
// state: right after fork() it closes every inherited descriptor but its
// socket, resets signal dispositions and asks for SIGKILL when the forker
// thread (that is, the host process) dies. It uses malloc (glibc's is
// fork-safe), no iostreams, locale, exceptions or locks another thread
// could have held.
//
// Cost: one fork per helper (spawned on the first run, reused, replaced
// after a run that was killed or that abandoned its state), then one
// request and one reply frame per run, a frame per output write and two per
// tool call. The helper opens the next run's mruby state while it is idle.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "sandbox/ruby/wire.hpp"

namespace corral::sandbox::ruby {

class HelperProcess {
 public:
  // Forks a helper; nullptr with `error` set when it cannot.
  static std::unique_ptr<HelperProcess> spawn(std::string& error);
  // Kills and reaps the helper if it is still there.
  ~HelperProcess();
  HelperProcess(const HelperProcess&) = delete;
  HelperProcess& operator=(const HelperProcess&) = delete;

  int fd() const noexcept { return fd_; }
  pid_t pid() const noexcept { return pid_; }
  Counters& counters() noexcept { return *counters_; }

  // SIGKILL, then reap. Returns the CPU seconds the helper used in total,
  // and in `signal` the signal that ended it (0 if it exited).
  double kill_and_reap(int* signal = nullptr);
  // Reaps a helper that is exiting on its own (after its socket closed).
  double reap(int* signal = nullptr);

 private:
  HelperProcess(pid_t pid, int fd, Counters* counters) : pid_(pid), fd_(fd), counters_(counters) {}
  pid_t pid_;
  int fd_;
  Counters* counters_;
  bool reaped_ = false;
};

// The helper's main loop; runs in the child, never returns.
[[noreturn]] void helper_main(int fd, Counters* counters);

}  // namespace corral::sandbox::ruby
