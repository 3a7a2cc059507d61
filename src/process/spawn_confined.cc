// src/process/spawn_confined.cc: the child side of a confined start. The
// starter (vfork-style, the supervisor's own memory) enters the shared user
// and network namespaces and clones the run's first process as a child of
// the supervisor; that process (a real fork, in its new pid, mount, ipc and
// uts namespaces) joins the unit's cgroups, finishes the namespaces, takes
// the command's ids, builds the filesystem view, drops its capabilities,
// then becomes the pid namespace's init or execs the command.
//
// Child code (see spawn_child.hpp): raw system calls only, no allocation.
#include <linux/capability.h>
#include <linux/sched.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "process/filesystem_view.hpp"
#include "process/spawn_child.hpp"

namespace corral::process::spawn_child {

namespace {

// Exits (127, nothing reported) when the supervisor is gone already.
CORRAL_CHILD_CODE void stay_bound_to_supervisor(const ChildPlan& plan) {
  ::syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  // This process is a copy of the supervisor's memory (tokens, other runs'
  // data) and, as the init, outlives the exec: a command with its uid must
  // not read it through /proc/1/mem. A change of uid makes a process
  // undumpable by itself; a command mapped to the supervisor's own uid
  // (a non-root supervisor, or uid 0 configured) has no such change.
  ::syscall(SYS_prctl, PR_SET_DUMPABLE, 0, 0, 0, 0);
  // The supervisor may have died before the death signal was armed: then
  // no write end of the lifeline is left.
  ::syscall(SYS_close, plan.lifeline_write);
  struct pollfd lifeline {
    plan.lifeline_read, POLLIN, 0
  };
  struct timespec now {};
  if (::syscall(SYS_ppoll, &lifeline, 1, &now, nullptr, 0) != 0) ::syscall(SYS_exit_group, 127);
  ::syscall(SYS_close, plan.lifeline_read);
}

CORRAL_CHILD_CODE void bring_loopback_up(const ChildPlan& plan) {
  long sock = ::syscall(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (sock < 0) child_fail(plan, kStageNetwork, errno);
  if (::syscall(SYS_ioctl, sock, SIOCSIFFLAGS, &plan.loopback) < 0) {
    child_fail(plan, kStageNetwork, errno);
  }
  ::syscall(SYS_close, sock);
}

// A new session, then what the clone could not do: the cgroup namespace
// (rooted where the process now is), the host name, loopback up.
CORRAL_CHILD_CODE void finish_namespaces(const ChildPlan& plan) {
  if (::syscall(SYS_setsid) < 0) child_fail(plan, kStageProcessGroup, errno);
  // After the parent moved us into the unit's leaf: the namespace's root is
  // the leaf.
  if (plan.cgroup_namespace && ::syscall(SYS_unshare, CLONE_NEWCGROUP) < 0) {
    child_fail(plan, kStageNamespace, errno);
  }
  if (plan.uts_namespace && ::syscall(SYS_sethostname, "corral", 6) < 0) {
    child_fail(plan, kStageNamespace, errno);
  }
  if (plan.loopback_up) bring_loopback_up(plan);
}

// To the command's ids first, keeping the capabilities the mounts need:
// what the view creates must belong to an id the user namespace maps
// (EOVERFLOW otherwise).
CORRAL_CHILD_CODE void take_command_ids(const ChildPlan& plan) {
  if (::syscall(SYS_prctl, PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0) {
    child_fail(plan, kStageIdentity, errno);
  }
  if (plan.drop_groups && ::syscall(SYS_setgroups, 0, nullptr) < 0) {
    child_fail(plan, kStageIdentity, errno);
  }
  if (::syscall(SYS_setresgid, plan.gid, plan.gid, plan.gid) < 0 ||
      ::syscall(SYS_setresuid, plan.uid, plan.uid, plan.uid) < 0) {
    child_fail(plan, kStageIdentity, errno);
  }
  struct __user_cap_header_struct header {
    _LINUX_CAPABILITY_VERSION_3, 0
  };
  struct __user_cap_data_struct caps[2] = {};
  if (::syscall(SYS_capget, &header, caps) < 0) child_fail(plan, kStageIdentity, errno);
  caps[0].effective = caps[0].permitted;
  caps[1].effective = caps[1].permitted;
  if (::syscall(SYS_capset, &header, caps) < 0) child_fail(plan, kStageIdentity, errno);
}

CORRAL_CHILD_CODE void build_filesystem_view(const ChildPlan& plan) {
  long failed = run_mount_steps(plan.mount_steps, plan.mount_step_count);
  if (failed >= 0) child_fail(plan, kStageFilesystem, errno, failed);
}

// Once the view is built: none left, in any set, nor to be kept over exec.
CORRAL_CHILD_CODE void drop_capabilities(const ChildPlan& plan) {
  for (int cap = 0; cap <= 63; ++cap) {
    if (::syscall(SYS_prctl, PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
      if (errno == EINVAL) break;  // past the kernel's last capability
      child_fail(plan, kStageIdentity, errno);
    }
  }
  ::syscall(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  struct __user_cap_header_struct header {
    _LINUX_CAPABILITY_VERSION_3, 0
  };
  struct __user_cap_data_struct caps[2] = {};
  if (::syscall(SYS_capset, &header, caps) < 0) child_fail(plan, kStageIdentity, errno);
  ::syscall(SYS_prctl, PR_SET_KEEPCAPS, 0, 0, 0, 0);
}

// The run's first process in a confined start.
[[noreturn]] CORRAL_CHILD_CODE void confined_main(ChildPlan& plan) {
  stay_bound_to_supervisor(plan);
  // This process joins, not the starter: a pids limit counts the init and
  // the command only.
  join_cgroups(plan);
  plan.cgroup_procs_fd = -1;  // the command is in them already
  plan.limit_procs_fds = {-1, -1, -1};
  finish_namespaces(plan);
  if (plan.drop_identity) take_command_ids(plan);
  if (plan.mount_step_count > 0) build_filesystem_view(plan);
  if (plan.drop_identity) drop_capabilities(plan);
  if (plan.use_init) init_main(plan);
  command_main(&plan);
  __builtin_unreachable();
}

}  // namespace

// Its signals stay blocked: the supervisor's handlers must not run here.
CORRAL_CHILD_CODE int starter_main(void* arg) {
  ChildPlan& plan = *static_cast<ChildPlan*>(arg);
  if (plan.user_namespace_fd >= 0 &&
      ::syscall(SYS_setns, plan.user_namespace_fd, CLONE_NEWUSER) < 0) {
    child_fail(plan, kStageNamespace, errno);
  }
  if (plan.network_namespace_fd >= 0 &&
      ::syscall(SYS_setns, plan.network_namespace_fd, CLONE_NEWNET) < 0) {
    child_fail(plan, kStageNetwork, errno);
  }
  long pid = -1;
  if (plan.cgroup_dir_fd >= 0) {
    struct clone_args args {};
    // The exit signal is ours (SIGCHLD) with CLONE_PARENT; clone3 wants 0.
    args.flags =
        static_cast<std::uint64_t>(plan.clone_flags & ~CSIGNAL) | CLONE_PARENT | CLONE_INTO_CGROUP;
    args.cgroup = static_cast<std::uint64_t>(plan.cgroup_dir_fd);
    pid = ::syscall(SYS_clone3, &args, sizeof args);
    if (pid == 0) {
      plan.cgroup_procs_fd = -1;  // in the leaf already
      confined_main(plan);
    }
  }
  // Without clone3 or CLONE_INTO_CGROUP (or refused): the first process
  // joins the leaf through cgroup.procs.
  if (pid < 0) pid = ::syscall(SYS_clone, plan.clone_flags | CLONE_PARENT, 0, 0, 0, 0);
  if (pid == 0) confined_main(plan);
  if (pid < 0) child_fail(plan, kStageNamespace, errno);
  plan.started_pid = static_cast<pid_t>(pid);
  ::syscall(SYS_exit_group, 0);
  return 0;
}

}  // namespace corral::process::spawn_child
