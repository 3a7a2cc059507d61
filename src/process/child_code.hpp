// src/process/child_code.hpp: the mark of code that runs between clone and
// exec, in a child sharing (vfork) or copying the memory of a multithreaded
// supervisor: raw system calls only, no allocation, no locks, and no
// sanitizer instrumentation (its interceptors take locks); and the guard that
// keeps signals blocked around the clone.
#pragma once

#include <pthread.h>
#include <signal.h>

#define CORRAL_CHILD_CODE __attribute__((noinline, no_sanitize("address", "undefined")))

namespace corral::process {

// Blocks every signal on this thread for the lifetime of the guard: held
// around a clone, so no handler of ours can run in the child before it
// resets dispositions (or, for a child that never does, at all).
class BlockSignals {
 public:
  BlockSignals() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old_);
  }
  ~BlockSignals() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  BlockSignals(const BlockSignals&) = delete;
  BlockSignals& operator=(const BlockSignals&) = delete;

 private:
  sigset_t old_;
};

}  // namespace corral::process
