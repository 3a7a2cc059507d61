// src/process/spawn.cc: the supervisor's side of a start: plan the
// confinement this host can apply, prepare everything the child reads
// (spawn_child.hpp's ChildPlan), clone, and turn the child's failure record
// into a SpawnError.
//
// The child's side (between clone and exec) lives in spawn_exec.cc,
// spawn_confined.cc and spawn_init.cc; what a command starts with
// (environment, executable) in spawn_environment.cc.
#include "process/spawn.hpp"

#include <fcntl.h>
#include <linux/sched.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "process/child_code.hpp"
#include "process/confine.hpp"
#include "process/filesystem_view.hpp"
#include "process/namespace_pool.hpp"
#include "process/spawn_child.hpp"

namespace corral::process {

namespace {

using namespace spawn_child;

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

// What the plan points into: it must outlive the clone (and, for a
// confined start, the starter's wait).
struct PlanStorage {
  std::vector<char*> argv;
  std::vector<std::string> environment;
  std::vector<char*> envp;
  UniqueFd null_fd;
  UniqueFd error_read, error_write;
  ChildStack stack;
  std::optional<FilesystemPlan> view;
  struct sock_fprog seccomp_program {};
  UniqueFd lifeline_read, lifeline_write;
  NetworkLease network;
};

// What every start sets: program, stdio, working directory, the view,
// rlimits and seccomp.
void plan_command(ChildPlan& plan, PlanStorage& storage, const Command& command,
                  const std::string& executable, const SpawnRequest& request,
                  const Applied& applied) {
  const Hardening& hardening = command.hardening;
  for (const auto& arg : command.argv) storage.argv.push_back(const_cast<char*>(arg.c_str()));
  storage.argv.push_back(nullptr);
  storage.environment = command_environment(hardening);
  for (auto& entry : storage.environment) storage.envp.push_back(entry.data());
  storage.envp.push_back(nullptr);
  storage.null_fd = open_null();
  make_pipe(storage.error_read, storage.error_write);

  plan.path = executable.c_str();
  plan.argv = storage.argv.data();
  plan.envp = storage.envp.data();
  plan.stdin_fd = request.stdin_fd >= 0 ? request.stdin_fd : storage.null_fd.get();
  plan.stdout_fd = request.stdout_fd;
  plan.stderr_fd = request.stderr_fd;
  plan.error_fd = storage.error_write.get();
  plan.working_directory =
      hardening.working_directory ? hardening.working_directory->c_str() : nullptr;
  if (applied.filesystem) {
    storage.view = FilesystemPlan::build(view_inputs(hardening, executable, applied));
    plan.mount_steps = storage.view->steps().data();
    plan.mount_step_count = storage.view->steps().size();
    plan.working_directory = storage.view->working_directory().c_str();
  }
  add_rlimit(plan, RLIMIT_CPU, hardening.rlimits.cpu_seconds);
  add_rlimit(plan, RLIMIT_AS, hardening.rlimits.address_space);
  add_rlimit(plan, RLIMIT_NOFILE, hardening.rlimits.open_files);
  add_rlimit(plan, RLIMIT_NPROC, hardening.rlimits.processes);
  plan.stack_top = storage.stack.top();
  plan.use_init = request.unit == UnitKind::pid_namespace || applied.pid_namespace;
  if (applied.seccomp) {
    const SeccompProgram& program = command_seccomp_program();
    storage.seccomp_program.len = static_cast<unsigned short>(program.filter.size());
    storage.seccomp_program.filter = const_cast<sock_filter*>(program.filter.data());
    plan.seccomp = &storage.seccomp_program;
  }
  plan.no_new_privs = applied.seccomp || applied.user_namespace;
  plan.cgroup_procs_fd = request.cgroup_procs_fd;
  plan.cgroup_dir_fd = request.cgroup_dir_fd;
  plan.limit_procs_fds = request.limit_cgroup_procs_fds;
}

// A confined start: the lifeline, the namespaces the first process is
// cloned into, the ids it takes, and the network it joins.
void plan_confined_start(ChildPlan& plan, PlanStorage& storage, const Applied& applied) {
  make_pipe(storage.lifeline_read, storage.lifeline_write);
  plan.lifeline_read = storage.lifeline_read.get();
  plan.lifeline_write = storage.lifeline_write.get();
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
    storage.network = lease_network_namespace(plan.user_namespace_fd);
    plan.network_namespace_fd = storage.network.fd();
  } else if (applied.network_namespace) {
    plan.clone_flags |= CLONE_NEWNET;
    plan.loopback_up = true;
    std::strncpy(plan.loopback.ifr_name, "lo", IFNAMSIZ - 1);
    plan.loopback.ifr_flags = IFF_UP | IFF_RUNNING;
  }
  plan.stack_top = storage.stack.middle();
}

// Clones the child (the starter of a confined start, else the command
// itself) and returns the command's first process, or -1 when a starter
// made none (its failure record says why).
pid_t clone_child(ChildPlan& plan, PlanStorage& storage, bool confined_start) {
  pid_t pid = -1;
  int clone_error = 0;
  {
    BlockSignals blocked;
    if (confined_start) {
      pid = ::clone(starter_main, storage.stack.top(), CLONE_VM | CLONE_VFORK | SIGCHLD, &plan);
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
    storage.lifeline_read.reset();
  }
  storage.error_write.reset();
  return pid;
}

// A child that could not exec wrote its record before exiting: reap it and
// throw what it says. Returns when the pipe closed empty (the exec worked).
void throw_child_failure(pid_t pid, const PlanStorage& storage, const Command& command) {
  ChildRecord record{};
  ssize_t n;
  do {
    n = ::read(storage.error_read.get(), &record, sizeof record);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof record)) return;
  int status = 0;
  if (pid > 0) ::waitpid(pid, &status, 0);
  const char* stage = record.stage >= 0 && record.stage < static_cast<int>(kStageNames.size())
                          ? kStageNames[static_cast<size_t>(record.stage)]
                          : "start";
  if (record.stage == kStageFilesystem && storage.view) {
    throw SpawnError(
        errno_message(std::string(stage) + " of " + command.argv[0] + ": " +
                          storage.view->describe(static_cast<std::size_t>(record.step)),
                      record.error));
  }
  throw SpawnError(errno_message(std::string(stage) + " " + command.argv[0], record.error));
}

}  // namespace

Spawned spawn(const Command& command, const std::string& executable, const SpawnRequest& request) {
  const Applied applied = plan_confinement(command.hardening);
  PlanStorage storage;
  ChildPlan plan;
  plan_command(plan, storage, command, executable, request, applied);
  const bool confined_start =
      plan.use_init || applied.user_namespace || applied.filesystem || applied.host_identity_drop;
  if (confined_start) {
    plan_confined_start(plan, storage, applied);
  } else {
    plan.new_network_namespace = applied.network_namespace;
  }

  const pid_t pid = clone_child(plan, storage, confined_start);
  throw_child_failure(pid, storage, command);
  if (pid <= 0) throw SpawnError("start " + command.argv[0] + ": the starter made no process");
  Spawned spawned;
  spawned.pid = pid;
  if (plan.use_init) spawned.network = std::move(storage.network);
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
