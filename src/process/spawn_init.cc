// src/process/spawn_init.cc: the pid namespace's init (pid 1 inside), which
// a confined start's first process becomes: it clone-execs the command,
// forwards SIGTERM to the whole namespace, reaps orphans, and exits with the
// command's status once the command exits (the kernel then kills whatever
// is left in the namespace).
//
// Child code (see spawn_child.hpp): raw system calls only, no allocation.
// The init is a copy of the supervisor's memory and outlives the exec.
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "process/spawn_child.hpp"

namespace corral::process::spawn_child {

namespace {

CORRAL_CHILD_CODE void init_ignore(int) {}

}  // namespace

// Keeps every signal blocked and takes SIGTERM and SIGCHLD synchronously.
// SIGTERM gets a handler (never run) because the kernel drops signals an
// init leaves at SIG_DFL.
[[noreturn]] CORRAL_CHILD_CODE void init_main(ChildPlan& plan) {
  ::syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  // What `ps` shows inside, rather than the supervisor's name.
  ::syscall(SYS_prctl, PR_SET_NAME, "corral-init", 0, 0, 0);
  KernelSigaction term{};
  term.handler = init_ignore;
  ::syscall(SYS_rt_sigaction, SIGTERM, &term, nullptr, kSigsetBytes);

  pid_t command = ::clone(command_main, plan.stack_top, CLONE_VM | CLONE_VFORK | SIGCHLD, &plan);
  if (command < 0) child_fail(plan, kStageInit, errno);
  // The command has exec'd (or reported its failure): drop every inherited fd,
  // so pipes reach EOF when the command's side closes them.
  ::syscall(SYS_close_range, 0, ~0U, 0);

  std::uint64_t wanted = (1ULL << (SIGTERM - 1)) | (1ULL << (SIGCHLD - 1));
  for (;;) {
    siginfo_t info;
    long sig = ::syscall(SYS_rt_sigtimedwait, &wanted, &info, nullptr, kSigsetBytes);
    if (sig == SIGTERM) ::syscall(SYS_kill, -1, SIGTERM);
    for (;;) {
      int status = 0;
      long reaped = ::syscall(SYS_wait4, -1, &status, WNOHANG, nullptr);
      if (reaped <= 0) break;
      if (reaped == command) {
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        ::syscall(SYS_exit_group, code);
      }
    }
  }
}

}  // namespace corral::process::spawn_child
