// src/process/confine.cc: see confine.hpp.
#include "process/confine.hpp"

#include <asm/ioctls.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "process/fd.hpp"

namespace corral::process {

std::string_view to_string(FilesystemView view) noexcept {
  switch (view) {
    case FilesystemView::host:
      return "host";
    case FilesystemView::host_read_only:
      return "host_read_only";
    case FilesystemView::minimal:
      return "minimal";
  }
  return "minimal";
}

std::optional<FilesystemView> filesystem_view_from_string(std::string_view text) noexcept {
  for (auto view :
       {FilesystemView::host, FilesystemView::host_read_only, FilesystemView::minimal}) {
    if (to_string(view) == text) return view;
  }
  return std::nullopt;
}

Confinement Confinement::none() {
  Confinement c;
  c.user_namespace = false;
  c.seccomp = false;
  c.pid_namespace = false;
  c.filesystem = FilesystemView::host;
  c.network = true;
  c.limits = ResourceLimits{};
  c.limits.processes = std::nullopt;
  return c;
}

Hardening Hardening::host() {
  Hardening h;
  h.environment_allow = std::nullopt;
  h.confinement = Confinement::none();
  return h;
}

namespace {

// The syscalls a confined command never needs and an escape often does.
constexpr const char* kKilledSyscalls[] = {
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
    "bpf",
    "keyctl",
    "add_key",
    "request_key",
    "perf_event_open",
    "userfaultfd",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "open_by_handle_at",
    "name_to_handle_at",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "swapon",
    "swapoff",
    "reboot",
    "acct",
    "quotactl",
    "syslog",
    "settimeofday",
    "clock_settime",
    "adjtimex",
    "clock_adjtime",
    "iopl",
    "ioperm",
};

constexpr std::uint64_t kCloneNamespaceFlags[] = {
    CLONE_NEWNS,  CLONE_NEWUTS, CLONE_NEWIPC,    CLONE_NEWUSER,
    CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP,
};

class FilterContext {
 public:
  FilterContext() : ctx_(seccomp_init(SCMP_ACT_ALLOW)) {}
  ~FilterContext() {
    if (ctx_ != nullptr) seccomp_release(ctx_);
  }
  FilterContext(const FilterContext&) = delete;
  FilterContext& operator=(const FilterContext&) = delete;
  scmp_filter_ctx get() const { return ctx_; }

 private:
  scmp_filter_ctx ctx_;
};

SeccompProgram build_program() {
  SeccompProgram out;
  FilterContext ctx;
  if (ctx.get() == nullptr) {
    out.error = "seccomp_init failed";
    return out;
  }
  auto fail = [&](const std::string& what, int rc) {
    out.error = what + ": " + std::strerror(-rc);
    return out;
  };
  // Only the native ABI: x32 and i386 system calls kill the process.
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
      rc != 0) {
    return fail("seccomp bad-arch action", rc);
  }
  for (const char* name : kKilledSyscalls) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) continue;  // not on this architecture
    if (int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_KILL_PROCESS, nr, 0); rc != 0) {
      return fail(std::string("seccomp rule ") + name, rc);
    }
  }
  for (std::uint64_t flag : kCloneNamespaceFlags) {
    if (int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_KILL_PROCESS, SCMP_SYS(clone), 1,
                                  SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
        rc != 0) {
      return fail("seccomp rule clone", rc);
    }
  }
  // clone3 passes its flags in memory a filter cannot read: ENOSYS makes
  // libc fall back to clone, which the rules above inspect (as Docker does).
  if (int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0); rc != 0) {
    return fail("seccomp rule clone3", rc);
  }
  // personality: only the default (0) and the query (0xffffffff). A rule
  // may test an argument once, so "neither" is 32 rules: some bit k set
  // with bit k+1 (cyclically) clear, which holds exactly when the 32-bit
  // value is neither all zeros nor all ones.
  for (unsigned k = 0; k < 32; ++k) {
    const std::uint64_t bit = 1ULL << k;
    const std::uint64_t next = 1ULL << ((k + 1) % 32);
    if (int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_KILL_PROCESS, SCMP_SYS(personality), 1,
                                  SCMP_A0(SCMP_CMP_MASKED_EQ, bit | next, bit));
        rc != 0) {
      return fail("seccomp rule personality", rc);
    }
  }
  for (unsigned long request : {static_cast<unsigned long>(TIOCSTI), 0x541CUL /* TIOCLINUX */}) {
    if (int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_KILL_PROCESS, SCMP_SYS(ioctl), 1,
                                  SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, request));
        rc != 0) {
      return fail("seccomp rule ioctl", rc);
    }
  }
  UniqueFd memfd(static_cast<int>(::syscall(SYS_memfd_create, "corral-seccomp", MFD_CLOEXEC)));
  if (!memfd) {
    out.error = std::string("memfd_create: ") + std::strerror(errno);
    return out;
  }
  if (int rc = seccomp_export_bpf(ctx.get(), memfd.get()); rc != 0) {
    return fail("seccomp_export_bpf", rc);
  }
  off_t size = ::lseek(memfd.get(), 0, SEEK_END);
  if (size <= 0 || size % static_cast<off_t>(sizeof(sock_filter)) != 0) {
    out.error = "seccomp_export_bpf wrote no program";
    return out;
  }
  out.filter.resize(static_cast<size_t>(size) / sizeof(sock_filter));
  if (::pread(memfd.get(), out.filter.data(), static_cast<size_t>(size), 0) != size) {
    out.filter.clear();
    out.error = "reading the exported seccomp program failed";
  }
  return out;
}

int probe_exit(void*) {
  ::syscall(SYS_exit_group, 0);
  return 0;
}

bool probe_clone(int flags) {
  constexpr size_t kStack = 64 * 1024;
  void* stack = ::mmap(nullptr, kStack, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return false;
  pid_t pid = ::clone(probe_exit, static_cast<char*>(stack) + kStack,
                      flags | CLONE_VM | CLONE_VFORK | SIGCHLD, nullptr);
  bool ok = false;
  if (pid > 0) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  ::munmap(stack, kStack);
  return ok;
}

ConfinementSupport probe_support() {
  ConfinementSupport s;
  s.seccomp = command_seccomp_program().error.empty() && ::prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
  // Where the kernel allows everything, one child in every namespace at once,
  // making the filesystem probe's mounts, answers every question: every
  // `corral call` probes, and four children cost 1.2 ms where one costs 0.74
  // (BENCHMARKS.md, third sitting). Anything refused: one question at a time.
  const FilesystemSupport all =
      probe_filesystem_support(true, CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET);
  if (all.mount_namespace && all.fresh_proc) {
    s.user_namespace = s.pid_namespace = s.network_namespace = true;
    s.filesystem = all;
    return s;
  }
  s.user_namespace = probe_clone(CLONE_NEWUSER);
  int owner = s.user_namespace ? CLONE_NEWUSER : 0;
  s.pid_namespace = probe_clone(owner | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS);
  s.network_namespace = probe_clone(owner | CLONE_NEWNET);
  if (s.user_namespace || ::geteuid() == 0) {
    s.filesystem = probe_filesystem_support(s.user_namespace);
  } else {
    s.filesystem.detail = "no user namespace, and the supervisor is not root";
  }
  return s;
}

}  // namespace

const SeccompProgram& command_seccomp_program() {
  static const SeccompProgram program = build_program();
  return program;
}

const ConfinementSupport& confinement_support() {
  static const ConfinementSupport support = probe_support();
  return support;
}

std::vector<Protection> confinement_protections(const Hardening& hardening) {
  const Confinement& c = hardening.confinement;
  const ConfinementSupport& s = confinement_support();
  std::vector<Protection> out;
  out.push_back(
      {"session", true, "setsid: a new session, no controlling terminal, stdin /dev/null"});
  if (!hardening.environment_allow) {
    out.push_back(
        {"environment", false, "the supervisor's environment is inherited (minus CORRAL_*)"});
  } else {
    out.push_back({"environment", true,
                   "only " + std::to_string(hardening.environment_allow->size()) +
                       " allowed name(s) plus the set ones; never CORRAL_*"});
  }
  if (c.user_namespace) {
    out.push_back(
        {"user_namespace", s.user_namespace,
         s.user_namespace ? "one mapped uid/gid, no capabilities, no_new_privs"
         : ::geteuid() == 0
             ? "this kernel refuses user namespaces: the command runs as host uid " +
                   std::to_string(c.uid.value_or(65534)) + " with no capabilities"
             : "this kernel refuses user namespaces: the command keeps the supervisor's uid"});
  }
  if (c.seccomp) {
    const SeccompProgram& program = command_seccomp_program();
    out.push_back({"seccomp", s.seccomp,
                   s.seccomp ? "escape syscalls kill the process; foreign ABIs killed"
                             : (program.error.empty() ? "seccomp unavailable" : program.error)});
  }
  if (c.pid_namespace) {
    out.push_back({"pid_namespace", s.pid_namespace,
                   s.pid_namespace ? "pid, ipc, uts and cgroup namespaces under corral's init"
                                   : "this kernel refuses pid namespaces"});
  }
  if (c.filesystem != FilesystemView::host) {
    std::string detail = std::string(to_string(c.filesystem)) + " view, " +
                         std::to_string(c.binds.size()) +
                         " bind(s), a private /tmp, a minimal /dev";
    if (!s.filesystem.mount_namespace) {
      detail = s.filesystem.detail + ": the command sees the host filesystem";
    } else if (!s.filesystem.fresh_proc) {
      detail += "; " + s.filesystem.detail;
    } else if (!c.pid_namespace || !s.pid_namespace) {
      detail += ", no /proc (no pid namespace of its own)";
    } else {
      detail += ", its own /proc";
    }
    out.push_back({"filesystem", s.filesystem.mount_namespace, detail});
  }
  if (!c.network || hardening.new_network_namespace) {
    out.push_back({"network", s.network_namespace,
                   s.network_namespace ? "a new network namespace with only loopback"
                                       : "this kernel refuses network namespaces"});
  }
  return out;
}

}  // namespace corral::process
