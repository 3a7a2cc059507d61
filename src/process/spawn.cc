// src/process/spawn.cc: clone, join the unit, harden, exec.
//
// Everything between clone and exec runs in a child that shares (vfork) or
// copies (pid-namespace init) the memory of a multithreaded supervisor, so
// it only makes raw system calls: no allocation, no locks, no sanitizer
// interceptors. Those functions are marked CORRAL_CHILD_CODE.
#include "process/spawn.hpp"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>
#include <vector>

extern char** environ;

namespace corral::process {

namespace {

#define CORRAL_CHILD_CODE __attribute__((noinline, no_sanitize("address", "undefined")))

enum Stage : int {
  kStageCgroup,
  kStageProcessGroup,
  kStageNetwork,
  kStageRlimit,
  kStageChdir,
  kStageStdio,
  kStageExec,
  kStageInit,
};
constexpr std::array<const char*, 8> kStageNames = {
    "join cgroup",
    "new process group",
    "new network namespace",
    "set rlimit",
    "chdir",
    "wire stdio",
    "exec",
    "start pid namespace init",
};

struct ChildRecord {
  int stage;
  int error;
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
  int null_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  int error_fd = -1;
  int cgroup_procs_fd = -1;
  bool new_process_group = false;
  bool new_network_namespace = false;
  const char* working_directory = nullptr;
  int rlimit_count = 0;
  std::array<ChildRlimit, 4> rlimits{};
  char* stack_top = nullptr;
};

[[noreturn]] CORRAL_CHILD_CODE void child_fail(const ChildPlan& plan, int stage, int error) {
  ChildRecord record{stage, error};
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
  if (plan.new_process_group && ::syscall(SYS_setpgid, 0, 0) < 0) {
    child_fail(plan, kStageProcessGroup, errno);
  }
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
  if (::syscall(SYS_dup3, plan.null_fd, 0, 0) < 0 ||
      ::syscall(SYS_dup3, plan.stdout_fd, 1, 0) < 0 ||
      ::syscall(SYS_dup3, plan.stderr_fd, 2, 0) < 0) {
    child_fail(plan, kStageStdio, errno);
  }
  // Nothing else the supervisor holds may reach the command.
  ::syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
  ::syscall(SYS_execve, plan.path, plan.argv, plan.envp);
  child_fail(plan, kStageExec, errno);
}

CORRAL_CHILD_CODE void init_ignore(int) {}

// The pid namespace's init (pid 1 inside). Keeps every signal blocked and
// takes SIGTERM and SIGCHLD synchronously. SIGTERM gets a handler (never
// run) because the kernel drops signals an init leaves at SIG_DFL.
[[noreturn]] CORRAL_CHILD_CODE void init_main(ChildPlan& plan) {
  ::syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
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

 private:
  void* base_ = nullptr;
};

// Blocks every signal on this thread for the lifetime of the guard, so no
// handler of ours can run in the child before it resets dispositions.
class BlockSignals {
 public:
  BlockSignals() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old_);
  }
  ~BlockSignals() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

bool is_executable_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::vector<std::string> build_environment(const Hardening& hardening) {
  std::vector<std::string> out;
  std::set<std::string> overridden;
  for (const auto& [name, value] : hardening.environment_set) overridden.insert(name);
  auto keep = [&](std::string_view name) {
    if (overridden.count(std::string(name)) != 0) return false;
    if (!hardening.environment_allow) return true;
    for (const auto& allowed : *hardening.environment_allow) {
      if (allowed == name) return true;
    }
    return false;
  };
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    auto eq = text.find('=');
    if (eq == std::string_view::npos) continue;
    if (keep(text.substr(0, eq))) out.emplace_back(text);
  }
  for (const auto& [name, value] : hardening.environment_set) out.push_back(name + "=" + value);
  return out;
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
  std::vector<char*> argv;
  for (const auto& arg : command.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> environment;
  std::vector<char*> envp;
  char* const* envp_data = environ;
  const Hardening& hardening = command.hardening;
  if (hardening.environment_allow || !hardening.environment_set.empty()) {
    environment = build_environment(hardening);
    for (auto& entry : environment) envp.push_back(entry.data());
    envp.push_back(nullptr);
    envp_data = envp.data();
  }

  UniqueFd null_fd = open_null();
  UniqueFd error_read, error_write;
  make_pipe(error_read, error_write);
  ChildStack stack;

  ChildPlan plan;
  plan.path = executable.c_str();
  plan.argv = argv.data();
  plan.envp = envp_data;
  plan.null_fd = null_fd.get();
  plan.stdout_fd = request.stdout_fd;
  plan.stderr_fd = request.stderr_fd;
  plan.error_fd = error_write.get();
  plan.cgroup_procs_fd = request.cgroup_procs_fd;
  plan.new_process_group = request.unit == UnitKind::process_group;
  plan.new_network_namespace = hardening.new_network_namespace;
  plan.working_directory =
      hardening.working_directory ? hardening.working_directory->c_str() : nullptr;
  add_rlimit(plan, RLIMIT_CPU, hardening.rlimits.cpu_seconds);
  add_rlimit(plan, RLIMIT_AS, hardening.rlimits.address_space);
  add_rlimit(plan, RLIMIT_NOFILE, hardening.rlimits.open_files);
  add_rlimit(plan, RLIMIT_NPROC, hardening.rlimits.processes);
  plan.stack_top = stack.top();

  pid_t pid = -1;
  int clone_error = 0;
  {
    BlockSignals blocked;
    if (request.unit == UnitKind::pid_namespace) {
      pid = static_cast<pid_t>(::syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, 0, 0, 0, 0));
      if (pid == 0) init_main(plan);
    } else {
      pid = ::clone(command_main, plan.stack_top, CLONE_VM | CLONE_VFORK | SIGCHLD, &plan);
    }
    clone_error = errno;
  }
  if (pid < 0) throw SpawnError(errno_message("clone", clone_error));
  error_write.reset();

  ChildRecord record{};
  ssize_t n;
  do {
    n = ::read(error_read.get(), &record, sizeof record);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof record)) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    const char* stage = record.stage >= 0 && record.stage < static_cast<int>(kStageNames.size())
                            ? kStageNames[static_cast<size_t>(record.stage)]
                            : "start";
    throw SpawnError(errno_message(std::string(stage) + " " + command.argv[0], record.error));
  }

  Spawned spawned;
  spawned.pid = pid;
  spawned.pidfd = UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!spawned.pidfd) {
    int error = errno;
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
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
