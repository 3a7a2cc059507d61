// src/process/spawn_exec.cc: the child's last steps before execve, the same
// for every start (the host profile's vfork-style child, or the command a
// confined start's first process becomes or its init clones): reset
// signals, join the unit, set rlimits, wire stdio, load seccomp, exec; and
// the failure report through the close-on-exec pipe.
//
// Child code (see spawn_child.hpp): raw system calls only, no allocation.
#include <linux/close_range.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "process/spawn_child.hpp"

namespace corral::process::spawn_child {

namespace {

// Nothing the supervisor set up (handlers, a blocked mask) may reach the
// command.
CORRAL_CHILD_CODE void reset_signals() {
  KernelSigaction default_action{};
  default_action.handler = SIG_DFL;
  for (int sig = 1; sig <= 64; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    ::syscall(SYS_rt_sigaction, sig, &default_action, nullptr, kSigsetBytes);
  }
  std::uint64_t no_signals = 0;
  ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &no_signals, nullptr, kSigsetBytes);
}

CORRAL_CHILD_CODE void set_rlimits(const ChildPlan& plan) {
  for (int i = 0; i < plan.rlimit_count; ++i) {
    if (::syscall(SYS_prlimit64, 0, plan.rlimits[i].resource, &plan.rlimits[i].limit, nullptr) <
        0) {
      child_fail(plan, kStageRlimit, errno);
    }
  }
}

CORRAL_CHILD_CODE void wire_stdio(const ChildPlan& plan) {
  if (::syscall(SYS_dup3, plan.stdin_fd, 0, 0) < 0 ||
      ::syscall(SYS_dup3, plan.stdout_fd, 1, 0) < 0 ||
      ::syscall(SYS_dup3, plan.stderr_fd, 2, 0) < 0) {
    child_fail(plan, kStageStdio, errno);
  }
  // Nothing else the supervisor holds may reach the command.
  ::syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
}

// Last, right before execve: the filter may refuse what the steps before
// need.
CORRAL_CHILD_CODE void load_seccomp(const ChildPlan& plan) {
  if (plan.no_new_privs && ::syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
    child_fail(plan, kStageIdentity, errno);
  }
  if (plan.seccomp != nullptr &&
      ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, plan.seccomp) < 0) {
    child_fail(plan, kStageSeccomp, errno);
  }
}

}  // namespace

[[noreturn]] CORRAL_CHILD_CODE void child_fail(const ChildPlan& plan, int stage, int error,
                                               long step) {
  ChildRecord record{stage, error, step};
  ::syscall(SYS_write, plan.error_fd, &record, sizeof record);
  ::syscall(SYS_exit_group, 127);
  __builtin_unreachable();
}

CORRAL_CHILD_CODE void join_cgroups(const ChildPlan& plan) {
  if (plan.cgroup_procs_fd >= 0 && ::syscall(SYS_write, plan.cgroup_procs_fd, "0", 1) < 0) {
    child_fail(plan, kStageCgroup, errno);
  }
  for (int fd : plan.limit_procs_fds) {
    if (fd >= 0 && ::syscall(SYS_write, fd, "0", 1) < 0) child_fail(plan, kStageLimitCgroup, errno);
  }
}

CORRAL_CHILD_CODE int command_main(void* arg) {
  const ChildPlan& plan = *static_cast<const ChildPlan*>(arg);
  reset_signals();
  join_cgroups(plan);
  // A new session: no controlling terminal, and the process group (whose id
  // is the leader's pid) the process-group unit signals. EPERM: already a
  // session leader (confined_main made it one).
  if (::syscall(SYS_setsid) < 0 && errno != EPERM) child_fail(plan, kStageProcessGroup, errno);
  ::syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (plan.new_network_namespace && ::syscall(SYS_unshare, CLONE_NEWNET) < 0) {
    child_fail(plan, kStageNetwork, errno);
  }
  set_rlimits(plan);
  if (plan.working_directory != nullptr && ::syscall(SYS_chdir, plan.working_directory) < 0) {
    child_fail(plan, kStageChdir, errno);
  }
  wire_stdio(plan);
  load_seccomp(plan);
  ::syscall(SYS_execve, plan.path, plan.argv, plan.envp);
  child_fail(plan, kStageExec, errno);
}

}  // namespace corral::process::spawn_child
