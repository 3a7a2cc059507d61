#include "sandbox/seccomp_policy.hpp"

#include <fcntl.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace corral::sandbox {
namespace {

// The policy; docs/security.md has it as a table with the reason for each
// line. Anything not named here fails with EPERM.
constexpr int kAllowed[] = {
    // Memory: V8's heap, code space (W^X flips), zones; malloc.
    SCMP_SYS(mmap),
    SCMP_SYS(munmap),
    SCMP_SYS(mprotect),
    SCMP_SYS(madvise),
    SCMP_SYS(mremap),
    SCMP_SYS(brk),
    SCMP_SYS(mincore),
    SCMP_SYS(membarrier),
    // Threads and their synchronisation.
    SCMP_SYS(futex),
    SCMP_SYS(set_robust_list),
    SCMP_SYS(get_robust_list),
    SCMP_SYS(rseq),
    SCMP_SYS(set_tid_address),
    SCMP_SYS(sched_yield),
    SCMP_SYS(sched_getaffinity),
    SCMP_SYS(sched_getparam),
    SCMP_SYS(sched_getscheduler),
    SCMP_SYS(getcpu),
    // I/O on descriptors the worker already holds.
    SCMP_SYS(read),
    SCMP_SYS(write),
    SCMP_SYS(readv),
    SCMP_SYS(writev),
    SCMP_SYS(pread64),
    SCMP_SYS(pwrite64),
    SCMP_SYS(recvfrom),
    SCMP_SYS(sendto),
    SCMP_SYS(recvmsg),
    SCMP_SYS(sendmsg),
    SCMP_SYS(shutdown),
    SCMP_SYS(close),
    SCMP_SYS(lseek),
    SCMP_SYS(fstat),
    SCMP_SYS(dup),
    SCMP_SYS(dup3),
    // Waiting: the worker's loop, condition variables with timeouts.
    SCMP_SYS(poll),
    SCMP_SYS(ppoll),
    SCMP_SYS(select),
    SCMP_SYS(pselect6),
    SCMP_SYS(epoll_create1),
    SCMP_SYS(epoll_ctl),
    SCMP_SYS(epoll_wait),
    SCMP_SYS(epoll_pwait),
    SCMP_SYS(epoll_pwait2),
    SCMP_SYS(eventfd2),
    SCMP_SYS(pipe2),
    SCMP_SYS(nanosleep),
    SCMP_SYS(clock_nanosleep),
    // Time and identity (answers about this process only).
    SCMP_SYS(clock_gettime),
    SCMP_SYS(clock_getres),
    SCMP_SYS(gettimeofday),
    SCMP_SYS(time),
    SCMP_SYS(getrusage),
    SCMP_SYS(times),
    SCMP_SYS(getpid),
    SCMP_SYS(gettid),
    SCMP_SYS(getppid),
    SCMP_SYS(getuid),
    SCMP_SYS(geteuid),
    SCMP_SYS(getgid),
    SCMP_SYS(getegid),
    SCMP_SYS(getrlimit),
    SCMP_SYS(uname),
    SCMP_SYS(sysinfo),
    SCMP_SYS(getrandom),
    // Signals within the process.
    SCMP_SYS(rt_sigaction),
    SCMP_SYS(rt_sigprocmask),
    SCMP_SYS(rt_sigreturn),
    SCMP_SYS(sigaltstack),
    SCMP_SYS(rt_sigpending),
    SCMP_SYS(rt_sigtimedwait),
    SCMP_SYS(rt_sigsuspend),
    SCMP_SYS(restart_syscall),
    // Leaving.
    SCMP_SYS(exit),
    SCMP_SYS(exit_group),
};

// Hostile whatever the arguments: the process is killed (SIGSYS) at once.
constexpr int kKilled[] = {
    // New programs and new processes.
    SCMP_SYS(execve),
    SCMP_SYS(execveat),
    SCMP_SYS(fork),
    SCMP_SYS(vfork),
    // Other processes' memory and state.
    SCMP_SYS(ptrace),
    SCMP_SYS(process_vm_readv),
    SCMP_SYS(process_vm_writev),
    SCMP_SYS(process_madvise),
    SCMP_SYS(kcmp),
    SCMP_SYS(pidfd_open),
    SCMP_SYS(pidfd_getfd),
    SCMP_SYS(pidfd_send_signal),
    SCMP_SYS(tkill),
    // Network and new sockets.
    SCMP_SYS(socket),
    SCMP_SYS(socketpair),
    SCMP_SYS(connect),
    SCMP_SYS(bind),
    SCMP_SYS(listen),
    SCMP_SYS(accept),
    SCMP_SYS(accept4),
    // Filesystem namespace and escapes through file handles.
    SCMP_SYS(mount),
    SCMP_SYS(umount2),
    SCMP_SYS(pivot_root),
    SCMP_SYS(chroot),
    SCMP_SYS(open_tree),
    SCMP_SYS(move_mount),
    SCMP_SYS(fsopen),
    SCMP_SYS(fsconfig),
    SCMP_SYS(fsmount),
    SCMP_SYS(fspick),
    SCMP_SYS(mount_setattr),
    SCMP_SYS(name_to_handle_at),
    SCMP_SYS(open_by_handle_at),
    SCMP_SYS(unshare),
    SCMP_SYS(setns),
    // Kernel attack surface a JavaScript worker never needs.
    SCMP_SYS(keyctl),
    SCMP_SYS(add_key),
    SCMP_SYS(request_key),
    SCMP_SYS(bpf),
    SCMP_SYS(perf_event_open),
    SCMP_SYS(userfaultfd),
    SCMP_SYS(io_uring_setup),
    SCMP_SYS(io_uring_enter),
    SCMP_SYS(io_uring_register),
    SCMP_SYS(kexec_load),
    SCMP_SYS(kexec_file_load),
    SCMP_SYS(init_module),
    SCMP_SYS(finit_module),
    SCMP_SYS(delete_module),
    SCMP_SYS(reboot),
    SCMP_SYS(swapon),
    SCMP_SYS(swapoff),
    SCMP_SYS(iopl),
    SCMP_SYS(ioperm),
    SCMP_SYS(acct),
    SCMP_SYS(quotactl),
    SCMP_SYS(syslog),
};

// Threads share memory, files, signal handlers; anything else from clone is
// a new process. Namespace flags are refused even on threads.
constexpr std::uint64_t kThreadFlags = CLONE_VM | CLONE_THREAD | CLONE_SIGHAND;
constexpr std::uint64_t kNamespaceFlags = CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS |
                                          CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |
                                          CLONE_NEWNET;

constexpr int kPrctlAllowed[] = {PR_SET_NAME, PR_GET_NAME, PR_GET_DUMPABLE, PR_SET_VMA};
constexpr int kFcntlAllowed[] = {F_GETFD, F_SETFD, F_GETFL, F_SETFL};

class Filter {
 public:
  Filter() : ctx_(seccomp_init(SCMP_ACT_ERRNO(EPERM))) {
    if (!ctx_) throw std::runtime_error("seccomp: seccomp_init failed");
  }
  ~Filter() { seccomp_release(ctx_); }
  Filter(const Filter&) = delete;
  Filter& operator=(const Filter&) = delete;

  void attr(scmp_filter_attr attribute, std::uint32_t value) {
    check(seccomp_attr_set(ctx_, attribute, value), "attribute");
  }
  template <typename... Conditions>
  void rule(std::uint32_t action, int syscall, Conditions... conditions) {
    const int rc = seccomp_rule_add(ctx_, action, syscall, sizeof...(conditions), conditions...);
    if (rc < 0) check(rc, "rule for syscall " + std::to_string(syscall));
  }
  void load() { check(seccomp_load(ctx_), "load"); }

 private:
  static void check(int rc, const std::string& what) {
    if (rc < 0) throw std::runtime_error("seccomp: " + what + ": " + std::strerror(-rc));
  }
  scmp_filter_ctx ctx_;
};

}  // namespace

void install_seccomp_policy() {
  Filter filter;
  // Any other ABI (i386 through int 0x80, x32) is a way around the rules.
  filter.attr(SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  // V8's threads exist already: the filter must cover them too.
  filter.attr(SCMP_FLTATR_CTL_TSYNC, 1);
  const std::uint32_t kill = SCMP_ACT_KILL_PROCESS;

  for (int syscall : kAllowed) filter.rule(SCMP_ACT_ALLOW, syscall);
  for (int syscall : kKilled) filter.rule(kill, syscall);

  // Threads yes, processes no. glibc tries clone3 first and falls back to
  // clone on ENOSYS; clone3's flags live in memory the filter cannot read.
  filter.rule(SCMP_ACT_ALLOW, SCMP_SYS(clone),
              SCMP_A0(SCMP_CMP_MASKED_EQ, kThreadFlags | kNamespaceFlags, kThreadFlags));
  filter.rule(kill, SCMP_SYS(clone), SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
  filter.rule(SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3));

  // Signals only to this process (its own tgid, as seen in its pid
  // namespace): raise(), pthread_kill(), V8's and the sanitizers' own use.
  const auto self = static_cast<scmp_datum_t>(::getpid());
  for (int syscall :
       {SCMP_SYS(kill), SCMP_SYS(tgkill), SCMP_SYS(rt_sigqueueinfo), SCMP_SYS(rt_tgsigqueueinfo)}) {
    filter.rule(SCMP_ACT_ALLOW, syscall, SCMP_A0(SCMP_CMP_EQ, self));
    filter.rule(kill, syscall, SCMP_A0(SCMP_CMP_NE, self));
  }

  // Reading limits is fine (glibc's getrlimit is prlimit64 with no new
  // value); raising or lowering them is not.
  filter.rule(SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), SCMP_A0(SCMP_CMP_EQ, 0),
              SCMP_A2(SCMP_CMP_EQ, 0));
  // fstat() on a descriptor is fstatat(fd, "", AT_EMPTY_PATH) in glibc.
  filter.rule(SCMP_ACT_ALLOW, SCMP_SYS(newfstatat),
              SCMP_A3(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH));
  for (int option : kPrctlAllowed)
    filter.rule(SCMP_ACT_ALLOW, SCMP_SYS(prctl),
                SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(option)));
  for (int command : kFcntlAllowed)
    filter.rule(SCMP_ACT_ALLOW, SCMP_SYS(fcntl),
                SCMP_A1(SCMP_CMP_EQ, static_cast<scmp_datum_t>(command)));
  // isatty() and friends: "not a terminal" (and no TIOCSTI on an inherited
  // terminal).
  filter.rule(SCMP_ACT_ERRNO(ENOTTY), SCMP_SYS(ioctl));
  filter.load();
}

}  // namespace corral::sandbox
