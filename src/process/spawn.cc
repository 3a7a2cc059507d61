// src/process/spawn.cc: clone, join the unit, harden, exec.
//
// Everything between clone and exec runs in a child that shares (vfork) or
// copies (pid-namespace init) the memory of a multithreaded supervisor, so
// it only makes raw system calls: no allocation, no locks, no sanitizer
// interceptors. Those functions are marked CORRAL_CHILD_CODE.
#include "process/spawn.hpp"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <vector>

#include "process/child_code.hpp"
#include "process/confine.hpp"
#include "process/filesystem_view.hpp"
#include "process/namespace_pool.hpp"

extern char** environ;

namespace corral::process {

namespace {

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
constexpr std::array<const char*, 13> kStageNames = {
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
constexpr long kSigsetBytes = 8;

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

[[noreturn]] CORRAL_CHILD_CODE void child_fail(const ChildPlan& plan, int stage, int error,
                                               long step = -1) {
  ChildRecord record{stage, error, step};
  ::syscall(SYS_write, plan.error_fd, &record, sizeof record);
  ::syscall(SYS_exit_group, 127);
  __builtin_unreachable();
}

// The command's side of the clone: reset signals, join the unit, harden,
// wire stdio, exec.
CORRAL_CHILD_CODE int command_main(void* arg) {
  const ChildPlan& plan = *static_cast<const ChildPlan*>(arg);
  KernelSigaction default_action{};
  default_action.handler = SIG_DFL;
  for (int sig = 1; sig <= 64; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    ::syscall(SYS_rt_sigaction, sig, &default_action, nullptr, kSigsetBytes);
  }
  std::uint64_t no_signals = 0;
  ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &no_signals, nullptr, kSigsetBytes);

  if (plan.cgroup_procs_fd >= 0 && ::syscall(SYS_write, plan.cgroup_procs_fd, "0", 1) < 0) {
    child_fail(plan, kStageCgroup, errno);
  }
  for (int fd : plan.limit_procs_fds) {
    if (fd >= 0 && ::syscall(SYS_write, fd, "0", 1) < 0) child_fail(plan, kStageLimitCgroup, errno);
  }
  // A new session: no controlling terminal, and the process group (whose id
  // is the leader's pid) the process-group unit signals. EPERM: already a
  // session leader (confined_main made it one).
  if (::syscall(SYS_setsid) < 0 && errno != EPERM) child_fail(plan, kStageProcessGroup, errno);
  ::syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (plan.new_network_namespace && ::syscall(SYS_unshare, CLONE_NEWNET) < 0) {
    child_fail(plan, kStageNetwork, errno);
  }
  for (int i = 0; i < plan.rlimit_count; ++i) {
    if (::syscall(SYS_prlimit64, 0, plan.rlimits[i].resource, &plan.rlimits[i].limit, nullptr) <
        0) {
      child_fail(plan, kStageRlimit, errno);
    }
  }
  if (plan.working_directory != nullptr && ::syscall(SYS_chdir, plan.working_directory) < 0) {
    child_fail(plan, kStageChdir, errno);
  }
  if (::syscall(SYS_dup3, plan.stdin_fd, 0, 0) < 0 ||
      ::syscall(SYS_dup3, plan.stdout_fd, 1, 0) < 0 ||
      ::syscall(SYS_dup3, plan.stderr_fd, 2, 0) < 0) {
    child_fail(plan, kStageStdio, errno);
  }
  // Nothing else the supervisor holds may reach the command.
  ::syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
  if (plan.no_new_privs && ::syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
    child_fail(plan, kStageIdentity, errno);
  }
  if (plan.seccomp != nullptr &&
      ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, plan.seccomp) < 0) {
    child_fail(plan, kStageSeccomp, errno);
  }
  ::syscall(SYS_execve, plan.path, plan.argv, plan.envp);
  child_fail(plan, kStageExec, errno);
}

CORRAL_CHILD_CODE void init_ignore(int) {}

// The pid namespace's init (pid 1 inside). Keeps every signal blocked and
// takes SIGTERM and SIGCHLD synchronously. SIGTERM gets a handler (never
// run) because the kernel drops signals an init leaves at SIG_DFL.
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

// The run's first process in a confined start (a real fork, in its new
// pid, mount, ipc and uts namespaces, a child of the supervisor): join the
// unit's cgroups, finish the namespaces, drop to the mapped ids with no
// capabilities, then become the pid namespace's init or exec the command.
[[noreturn]] CORRAL_CHILD_CODE void confined_main(ChildPlan& plan) {
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
  // This process joins, not the starter: a pids limit counts the init and
  // the command only.
  if (plan.cgroup_procs_fd >= 0 && ::syscall(SYS_write, plan.cgroup_procs_fd, "0", 1) < 0) {
    child_fail(plan, kStageCgroup, errno);
  }
  for (int fd : plan.limit_procs_fds) {
    if (fd >= 0 && ::syscall(SYS_write, fd, "0", 1) < 0) child_fail(plan, kStageLimitCgroup, errno);
  }
  plan.cgroup_procs_fd = -1;  // the command is in them already
  plan.limit_procs_fds = {-1, -1, -1};
  if (::syscall(SYS_setsid) < 0) child_fail(plan, kStageProcessGroup, errno);
  // After the parent moved us into the unit's leaf: the namespace's root is
  // the leaf.
  if (plan.cgroup_namespace && ::syscall(SYS_unshare, CLONE_NEWCGROUP) < 0) {
    child_fail(plan, kStageNamespace, errno);
  }
  if (plan.uts_namespace && ::syscall(SYS_sethostname, "corral", 6) < 0) {
    child_fail(plan, kStageNamespace, errno);
  }
  if (plan.loopback_up) {
    long sock = ::syscall(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (sock < 0) child_fail(plan, kStageNetwork, errno);
    if (::syscall(SYS_ioctl, sock, SIOCSIFFLAGS, &plan.loopback) < 0) {
      child_fail(plan, kStageNetwork, errno);
    }
    ::syscall(SYS_close, sock);
  }
  struct __user_cap_header_struct header {
    _LINUX_CAPABILITY_VERSION_3, 0
  };
  struct __user_cap_data_struct caps[2] = {};
  if (plan.drop_identity) {
    // To the command's ids first, keeping the capabilities the mounts need:
    // what the view creates must belong to an id the user namespace maps
    // (EOVERFLOW otherwise).
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
    if (::syscall(SYS_capget, &header, caps) < 0) child_fail(plan, kStageIdentity, errno);
    caps[0].effective = caps[0].permitted;
    caps[1].effective = caps[1].permitted;
    if (::syscall(SYS_capset, &header, caps) < 0) child_fail(plan, kStageIdentity, errno);
  }
  if (plan.mount_step_count > 0) {
    long failed = run_mount_steps(plan.mount_steps, plan.mount_step_count);
    if (failed >= 0) child_fail(plan, kStageFilesystem, errno, failed);
  }
  if (plan.drop_identity) {
    for (int cap = 0; cap <= 63; ++cap) {
      if (::syscall(SYS_prctl, PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
        if (errno == EINVAL) break;  // past the kernel's last capability
        child_fail(plan, kStageIdentity, errno);
      }
    }
    ::syscall(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    caps[0] = caps[1] = {};
    if (::syscall(SYS_capset, &header, caps) < 0) child_fail(plan, kStageIdentity, errno);
    ::syscall(SYS_prctl, PR_SET_KEEPCAPS, 0, 0, 0, 0);
  }
  if (plan.use_init) init_main(plan);
  command_main(&plan);
  __builtin_unreachable();
}

// The starter of a confined start: a vfork-style child (the supervisor's
// memory, not a copy of it) that enters the shared namespaces, clones the
// run's first process as a child of the supervisor (CLONE_PARENT) and
// exits. Its signals stay blocked: the supervisor's handlers must not run
// here.
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

CORRAL_CHILD_CODE int probe_main(void*) {
  ::syscall(SYS_exit_group, 0);
  return 0;
}

// Stack for the vfork-style child (and the init's inner clone).
class ChildStack {
 public:
  static constexpr size_t kSize = 256 * 1024;
  ChildStack() {
    base_ = ::mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
                   -1, 0);
    if (base_ == MAP_FAILED) throw SpawnError(errno_message("mmap child stack", errno));
  }
  ~ChildStack() { ::munmap(base_, kSize); }
  ChildStack(const ChildStack&) = delete;
  ChildStack& operator=(const ChildStack&) = delete;
  char* top() const { return static_cast<char*>(base_) + kSize; }
  // A confined start's starter runs on the upper half; the command's clone
  // (in the first process's copy of this memory) on the lower one.
  char* middle() const { return static_cast<char*>(base_) + kSize / 2; }

 private:
  void* base_ = nullptr;
};

constexpr const char* kDefaultPath = "PATH=/usr/local/bin:/usr/bin:/bin";

bool is_corral_variable(std::string_view name) { return name.rfind("CORRAL_", 0) == 0; }

bool is_executable_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// The parts of a command's confinement this start applies (what the host
// lacks left out; with `strict`, a SpawnError instead).
struct Applied {
  bool user_namespace = false;
  bool pid_namespace = false;
  bool network_namespace = false;
  bool seccomp = false;
  bool filesystem = false;
  // Without a user namespace, a root supervisor's command still drops to
  // uid/gid (65534 unless configured) with no capabilities.
  bool host_identity_drop = false;
  unsigned uid = 0;
  unsigned gid = 0;
};

Applied plan_confinement(const Hardening& hardening) {
  const Confinement& c = hardening.confinement;
  const ConfinementSupport& support = confinement_support();
  Applied applied;
  std::string missing;
  auto want = [&](bool requested, bool available, const char* name) {
    if (requested && !available) missing += (missing.empty() ? "" : ", ") + std::string(name);
    return requested && available;
  };
  applied.user_namespace = want(c.user_namespace, support.user_namespace, "user_namespace");
  applied.pid_namespace = want(c.pid_namespace, support.pid_namespace, "pid_namespace");
  applied.network_namespace =
      want(!c.network || hardening.new_network_namespace, support.network_namespace, "network");
  applied.seccomp = want(c.seccomp, support.seccomp, "seccomp");
  applied.filesystem =
      want(c.filesystem != FilesystemView::host, support.filesystem.mount_namespace, "filesystem");
  if (c.strict && !missing.empty()) {
    throw SpawnError("strict confinement: not enforceable on this host: " + missing);
  }
  if (applied.user_namespace) {
    const bool root = ::geteuid() == 0;
    applied.uid = c.uid.value_or(root ? 65534U : ::geteuid());
    applied.gid = c.gid.value_or(root ? 65534U : ::getegid());
    if (!root && (applied.uid != ::geteuid() || applied.gid != ::getegid())) {
      throw SpawnError("confinement: a non-root supervisor can only map its own uid and gid");
    }
  } else if (::geteuid() == 0 && (c.user_namespace || c.uid || c.gid)) {
    // No user namespace (refused, or turned off with ids given): root's
    // command still runs as an unprivileged host uid.
    applied.host_identity_drop = true;
    applied.uid = c.uid.value_or(65534U);
    applied.gid = c.gid.value_or(65534U);
  }
  return applied;
}

// The filesystem view's inputs: host paths made absolute (a relative
// executable is relative to the working directory), and where a view of
// the host starts when no working directory is set (where the supervisor
// is).
FilesystemPlan::Inputs view_inputs(const Hardening& hardening, const std::string& executable,
                                   const Applied& applied) {
  const Confinement& c = hardening.confinement;
  FilesystemPlan::Inputs in;
  in.view = c.filesystem;
  in.binds = c.binds;
  in.fresh_proc = applied.pid_namespace && confinement_support().filesystem.fresh_proc;
  constexpr std::uint64_t kDefaultTmpBytes = std::uint64_t{256} << 20;
  // Half the memory limit: tmpfs pages count against it, so a full /tmp
  // is "No space left on device", not the kernel's OOM killer.
  in.tmp_bytes = c.limits.memory_bytes ? *c.limits.memory_bytes / 2 : kDefaultTmpBytes;
  std::string cwd;
  if (char* here = ::getcwd(nullptr, 0)) {
    cwd = here;
    std::free(here);
  }
  in.working_directory = hardening.working_directory;
  if (in.working_directory && (*in.working_directory)[0] != '/') {
    in.working_directory = cwd + "/" + *in.working_directory;
  }
  if (!in.working_directory && c.filesystem == FilesystemView::host_read_only && !cwd.empty()) {
    in.working_directory = cwd;
  }
  in.executable = executable;
  if (!executable.empty() && executable[0] != '/') {
    in.executable = in.working_directory.value_or(cwd) + "/" + executable;
  }
  return in;
}

void add_rlimit(ChildPlan& plan, int resource, const std::optional<std::uint64_t>& value) {
  if (!value) return;
  rlim_t limit = static_cast<rlim_t>(*value);
  plan.rlimits[static_cast<size_t>(plan.rlimit_count++)] = ChildRlimit{resource, {limit, limit}};
}

UniqueFd open_null() {
  UniqueFd fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!fd) throw SpawnError(errno_message("open /dev/null", errno));
  if (fd.get() < 3) {
    UniqueFd lifted(::fcntl(fd.get(), F_DUPFD_CLOEXEC, 3));
    if (!lifted) throw SpawnError(errno_message("fcntl", errno));
    return lifted;
  }
  return fd;
}

}  // namespace

std::vector<std::string> command_environment(const Hardening& hardening) {
  std::vector<std::string> out;
  std::set<std::string> overridden;
  for (const auto& [name, value] : hardening.environment_set) overridden.insert(name);
  auto keep = [&](std::string_view name) {
    if (is_corral_variable(name) || overridden.count(std::string(name)) != 0) return false;
    if (!hardening.environment_allow) return true;
    for (const auto& allowed : *hardening.environment_allow) {
      if (allowed == name) return true;
    }
    return false;
  };
  bool has_path = false;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    auto eq = text.find('=');
    if (eq == std::string_view::npos) continue;
    if (keep(text.substr(0, eq))) {
      out.emplace_back(text);
      has_path = has_path || text.substr(0, eq) == "PATH";
    }
  }
  for (const auto& [name, value] : hardening.environment_set) {
    if (is_corral_variable(name)) continue;
    out.push_back(name + "=" + value);
    has_path = has_path || name == "PATH";
  }
  if (!has_path && hardening.environment_allow) out.emplace_back(kDefaultPath);
  return out;
}

std::string resolve_executable(const Command& command) {
  if (command.argv.empty() || command.argv[0].empty()) {
    throw SpawnError("the command has no program");
  }
  const std::string& name = command.argv[0];
  if (name.find('/') != std::string::npos) {
    std::string path = name;
    if (name[0] != '/' && command.hardening.working_directory) {
      path = *command.hardening.working_directory + "/" + name;
    }
    if (!is_executable_file(path)) throw SpawnError("not an executable file: " + path);
    return name;  // exec resolves relative paths after chdir, as the check did
  }
  const char* env_path = std::getenv("PATH");
  std::string search = env_path != nullptr ? env_path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= search.size()) {
    size_t end = search.find(':', start);
    if (end == std::string::npos) end = search.size();
    std::string dir = search.substr(start, end - start);
    if (!dir.empty()) {
      std::string candidate = dir + "/" + name;
      if (is_executable_file(candidate)) return candidate;
    }
    start = end + 1;
  }
  throw SpawnError("not found in PATH: " + name);
}

Spawned spawn(const Command& command, const std::string& executable, const SpawnRequest& request) {
  const Hardening& hardening = command.hardening;
  const Applied applied = plan_confinement(hardening);
  std::vector<char*> argv;
  for (const auto& arg : command.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> environment = command_environment(hardening);
  std::vector<char*> envp;
  for (auto& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);

  UniqueFd null_fd = open_null();
  UniqueFd error_read, error_write;
  make_pipe(error_read, error_write);
  ChildStack stack;

  ChildPlan plan;
  plan.path = executable.c_str();
  plan.argv = argv.data();
  plan.envp = envp.data();
  plan.stdin_fd = request.stdin_fd >= 0 ? request.stdin_fd : null_fd.get();
  plan.stdout_fd = request.stdout_fd;
  plan.stderr_fd = request.stderr_fd;
  plan.error_fd = error_write.get();
  plan.working_directory =
      hardening.working_directory ? hardening.working_directory->c_str() : nullptr;
  std::optional<FilesystemPlan> view;
  if (applied.filesystem) {
    view = FilesystemPlan::build(view_inputs(hardening, executable, applied));
    plan.mount_steps = view->steps().data();
    plan.mount_step_count = view->steps().size();
    plan.working_directory = view->working_directory().c_str();
  }
  add_rlimit(plan, RLIMIT_CPU, hardening.rlimits.cpu_seconds);
  add_rlimit(plan, RLIMIT_AS, hardening.rlimits.address_space);
  add_rlimit(plan, RLIMIT_NOFILE, hardening.rlimits.open_files);
  add_rlimit(plan, RLIMIT_NPROC, hardening.rlimits.processes);
  plan.stack_top = stack.top();
  plan.use_init = request.unit == UnitKind::pid_namespace || applied.pid_namespace;
  const bool confined_start =
      plan.use_init || applied.user_namespace || applied.filesystem || applied.host_identity_drop;
  struct sock_fprog seccomp_program {};
  if (applied.seccomp) {
    const SeccompProgram& program = command_seccomp_program();
    seccomp_program.len = static_cast<unsigned short>(program.filter.size());
    seccomp_program.filter = const_cast<sock_filter*>(program.filter.data());
    plan.seccomp = &seccomp_program;
  }
  plan.no_new_privs = applied.seccomp || applied.user_namespace;

  UniqueFd lifeline_read, lifeline_write;
  NetworkLease network;
  plan.cgroup_procs_fd = request.cgroup_procs_fd;
  plan.cgroup_dir_fd = request.cgroup_dir_fd;
  plan.limit_procs_fds = request.limit_cgroup_procs_fds;
  if (confined_start) {
    make_pipe(lifeline_read, lifeline_write);
    plan.lifeline_read = lifeline_read.get();
    plan.lifeline_write = lifeline_write.get();
    plan.clone_flags = SIGCHLD;
    if (applied.user_namespace) {
      plan.user_namespace_fd = shared_user_namespace(applied.uid, applied.gid);
    }
    if (applied.user_namespace || applied.host_identity_drop) {
      plan.drop_identity = true;
      plan.drop_groups = ::geteuid() == 0;
      plan.uid = applied.uid;
      plan.gid = applied.gid;
    }
    if (applied.filesystem) plan.clone_flags |= CLONE_NEWNS;
    if (plan.use_init) plan.clone_flags |= CLONE_NEWPID;
    if (applied.pid_namespace) {
      plan.clone_flags |= CLONE_NEWIPC | CLONE_NEWUTS;
      plan.uts_namespace = true;
      plan.cgroup_namespace = true;
    }
    if (applied.network_namespace && plan.use_init) {
      // Handed on only once the run's pid namespace is empty (Unit::release).
      network = lease_network_namespace(plan.user_namespace_fd);
      plan.network_namespace_fd = network.fd();
    } else if (applied.network_namespace) {
      plan.clone_flags |= CLONE_NEWNET;
      plan.loopback_up = true;
      std::strncpy(plan.loopback.ifr_name, "lo", IFNAMSIZ - 1);
      plan.loopback.ifr_flags = IFF_UP | IFF_RUNNING;
    }
    plan.stack_top = stack.middle();
  } else {
    plan.new_network_namespace = applied.network_namespace;
  }

  pid_t pid = -1;
  int clone_error = 0;
  {
    BlockSignals blocked;
    if (confined_start) {
      pid = ::clone(starter_main, stack.top(), CLONE_VM | CLONE_VFORK | SIGCHLD, &plan);
    } else {
      pid = ::clone(command_main, plan.stack_top, CLONE_VM | CLONE_VFORK | SIGCHLD, &plan);
    }
    clone_error = errno;
  }
  if (pid < 0) throw SpawnError(errno_message("clone", clone_error));
  if (confined_start) {
    // The starter has exited (CLONE_VFORK): reap it; its clone, if it made
    // one, is our child now.
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    pid = plan.started_pid;
    lifeline_read.reset();
  }
  error_write.reset();

  auto kill_child = [&] {
    if (pid <= 0) return;
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
  };

  ChildRecord record{};
  ssize_t n;
  do {
    n = ::read(error_read.get(), &record, sizeof record);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof record)) {
    int status = 0;
    if (pid > 0) ::waitpid(pid, &status, 0);
    const char* stage = record.stage >= 0 && record.stage < static_cast<int>(kStageNames.size())
                            ? kStageNames[static_cast<size_t>(record.stage)]
                            : "start";
    if (record.stage == kStageFilesystem && view) {
      throw SpawnError(errno_message(std::string(stage) + " of " + command.argv[0] + ": " +
                                         view->describe(static_cast<std::size_t>(record.step)),
                                     record.error));
    }
    throw SpawnError(errno_message(std::string(stage) + " " + command.argv[0], record.error));
  }

  if (pid <= 0) throw SpawnError("start " + command.argv[0] + ": the starter made no process");
  Spawned spawned;
  spawned.pid = pid;
  if (plan.use_init) spawned.network = std::move(network);
  spawned.pidfd = UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!spawned.pidfd) {
    int error = errno;
    kill_child();
    throw SpawnError(errno_message("pidfd_open", error));
  }
  return spawned;
}

bool pid_namespace_available() {
  try {
    ChildStack stack;
    pid_t pid =
        ::clone(probe_main, stack.top(), CLONE_NEWPID | CLONE_VM | CLONE_VFORK | SIGCHLD, nullptr);
    if (pid < 0) return false;
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  } catch (const SpawnError&) {
    return false;
  }
}

}  // namespace corral::process
