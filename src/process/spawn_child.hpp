// src/process/spawn_child.hpp: what spawn.cc hands the child it clones: the
// plan (prepared in the parent, read between clone and exec), the record a
// failed child writes to the close-on-exec pipe, and the child-side entry
// points (spawn_exec.cc, spawn_confined.cc, spawn_init.cc).
//
// Every function declared here runs in a child that shares (vfork) or
// copies (the confined first process, the pid-namespace init) the memory of
// a multithreaded supervisor: raw system calls only, no allocation, no
// locks, marked CORRAL_CHILD_CODE (child_code.hpp).
#pragma once

#include <linux/filter.h>
#include <net/if.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <array>
#include <cstddef>
#include <cstdint>

#include "process/child_code.hpp"
#include "process/filesystem_view.hpp"

namespace corral::process::spawn_child {

// What the child was doing when it failed; kStageNames says it in words.
enum Stage : int {
  kStageCgroup,
  kStageProcessGroup,
  kStageNetwork,
  kStageRlimit,
  kStageChdir,
  kStageStdio,
  kStageExec,
  kStageInit,
  kStageLimitCgroup,
  kStageNamespace,
  kStageIdentity,
  kStageSeccomp,
  kStageFilesystem,
};
inline constexpr std::array<const char*, 13> kStageNames = {
    "join cgroup",
    "new process group",
    "new network namespace",
    "set rlimit",
    "chdir",
    "wire stdio",
    "exec",
    "start pid namespace init",
    "join limit cgroup",
    "set up namespaces",
    "drop privileges",
    "load seccomp filter",
    "build the filesystem view",
};

// What a child that could not exec writes to the error pipe.
struct ChildRecord {
  int stage;
  int error;
  long step;  // kStageFilesystem: the mount step that failed
};

// The kernel's struct sigaction (rt_sigaction), not glibc's.
struct KernelSigaction {
  void (*handler)(int);
  unsigned long flags;
  void (*restorer)();
  std::uint64_t mask;
};
inline constexpr long kSigsetBytes = 8;

struct ChildRlimit {
  int resource;
  struct rlimit limit;
};

// Everything the child needs, prepared by the parent before clone.
struct ChildPlan {
  const char* path = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  int error_fd = -1;
  int cgroup_procs_fd = -1;
  int cgroup_dir_fd = -1;  // confined start: the first process is cloned into it
  std::array<int, 3> limit_procs_fds{-1, -1, -1};
  bool new_network_namespace = false;  // unshare it in command_main (no user/pid namespace)
  // Confined start: a vfork-style starter enters the shared user and network
  // namespaces (-1: none) and clones the run's first process with
  // `clone_flags`; that process sets up and becomes the init or the command.
  bool use_init = false;
  int user_namespace_fd = -1;
  int network_namespace_fd = -1;
  int clone_flags = 0;
  pid_t started_pid = 0;  // written by the starter
  // The supervisor holds the write end until the start is over: a first
  // process that finds no writer left lost its supervisor.
  int lifeline_read = -1;
  int lifeline_write = -1;
  bool cgroup_namespace = false;
  bool uts_namespace = false;
  bool loopback_up = false;
  struct ifreq loopback {};
  const MountStep* mount_steps = nullptr;  // the filesystem view, in the new mount namespace
  std::size_t mount_step_count = 0;
  bool drop_identity = false;  // to uid/gid (mapped ones in a user namespace), no capabilities
  bool drop_groups = false;
  unsigned uid = 0;
  unsigned gid = 0;
  bool no_new_privs = false;
  const struct sock_fprog* seccomp = nullptr;
  const char* working_directory = nullptr;
  int rlimit_count = 0;
  std::array<ChildRlimit, 4> rlimits{};
  char* stack_top = nullptr;
};

// Writes the failure record to the plan's error pipe and exits 127.
[[noreturn]] CORRAL_CHILD_CODE void child_fail(const ChildPlan& plan, int stage, int error,
                                               long step = -1);

// Writes "0" to the unit's cgroup.procs and every limit leaf's, as the plan
// has them (spawn_exec.cc).
CORRAL_CHILD_CODE void join_cgroups(const ChildPlan& plan);

// The command's side of the clone (a `ChildPlan*`): reset signals, join the
// unit, harden, wire stdio, exec (spawn_exec.cc).
CORRAL_CHILD_CODE int command_main(void* arg);

// The starter of a confined start (a `ChildPlan*`), cloned vfork-style by
// the supervisor (spawn_confined.cc).
CORRAL_CHILD_CODE int starter_main(void* arg);

// The pid namespace's init (spawn_init.cc).
[[noreturn]] CORRAL_CHILD_CODE void init_main(ChildPlan& plan);

}  // namespace corral::process::spawn_child
