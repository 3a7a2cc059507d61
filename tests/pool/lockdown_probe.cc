// tests/pool/lockdown_probe.cc: a worker-like process for lockdown_test.
//
// Starts like `corral worker` (namespaces, V8 and a warm-up run, lockdown),
// then answers commands, one line each, on fd 3:
//
//   -> ready <getpid()> <protections as JSON>       (once, after lockdown)
//   <- workloads             -> ok | fail <what>
//   <- attempt <op> [<pid>]  -> allowed <result> | refused <errno name>
//                               (or the process is killed by the policy)
//   <- exit                  (or EOF)
//
// Flags: --no-namespaces skips step 1, --no-lockdown skips step 2 (for
// tracing what V8 needs with strace).
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "corral/sandbox.hpp"
#include "pool/lockdown.hpp"

namespace {

using corral::sandbox::Options;
using corral::sandbox::Sandbox;
using corral::sandbox::ToolReply;
using namespace std::chrono_literals;

constexpr int kFd = 3;

void send_line(const std::string& line) {
  const std::string text = line + "\n";
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(kFd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(3);
    done += static_cast<std::size_t>(n);
  }
}

std::optional<std::string> read_line() {
  static std::string pending;
  for (;;) {
    const auto end = pending.find('\n');
    if (end != std::string::npos) {
      std::string line = pending.substr(0, end);
      pending.erase(0, end + 1);
      return line;
    }
    char buffer[512];
    const ssize_t n = ::read(kFd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    pending.append(buffer, static_cast<std::size_t>(n));
  }
}

// ---- workloads: what a worker does for guests, all after the lockdown ----

struct Outcome {
  std::optional<corral::FailureCode> code;
  std::string value;
};

Outcome run(Sandbox& sandbox, std::string_view code, bool eval = false) {
  try {
    return {std::nullopt, (eval ? sandbox.eval(code) : sandbox.execute(code)).value()};
  } catch (const corral::Error& e) {
    return {e.code(), e.what()};
  }
}

Options bounded(std::chrono::milliseconds timeout, std::uint64_t memory = 64u << 20,
                corral::sandbox::Profile profile = corral::sandbox::Profile::hermetic) {
  Options options;
  options.timeout = timeout;
  options.memory_limit = memory;
  options.profile = profile;
  return options;
}

// Returns an empty string when every workload behaved, else what did not.
std::string workloads() {
  auto expect_value = [](Sandbox& sandbox, std::string_view code,
                         const std::string& want) -> std::string {
    const Outcome got = run(sandbox, code);
    if (got.code || got.value != want)
      return std::string(code.substr(0, 40)) + " gave " + got.value;
    return "";
  };
  auto expect_code = [](Sandbox& sandbox, std::string_view code,
                        corral::FailureCode want) -> std::string {
    const Outcome got = run(sandbox, code);
    if (got.code != want) return std::string(code.substr(0, 40)) + " gave " + got.value;
    return "";
  };
  std::string problem;
  auto check = [&](std::string result) {
    if (problem.empty() && !result.empty()) problem = std::move(result);
  };

  for (int round = 0; round < 3 && problem.empty(); ++round) {
    {
      Sandbox sandbox(bounded(5s));
      check(expect_value(sandbox, "1 + 1", "2"));
      check(expect_value(sandbox,
                         "async () => { const r = []; for (let i = 0; i < 100; i++)"
                         " r.push(await Promise.resolve(i)); return r.length; }",
                         "100"));
      check(expect_code(sandbox, "throw new Error('boom')", corral::FailureCode::guest_error));
      check(expect_value(sandbox, "/(a+)+b/.test('a'.repeat(20) + 'b')", "true"));
    }
    {
      Sandbox sandbox(bounded(100ms));
      check(expect_code(sandbox, "while (true) {}", corral::FailureCode::timeout));
    }
    {
      Sandbox sandbox(bounded(100ms));
      check(expect_code(sandbox, "async () => { while (true) await null; }",
                        corral::FailureCode::timeout));
    }
    {
      Sandbox sandbox(bounded(10s, 16u << 20));
      check(expect_code(sandbox, "const a = []; while (true) a.push(new Array(1e5).fill(1.5));",
                        corral::FailureCode::memory_limit));
    }
    {
      Sandbox sandbox(bounded(10s, 16u << 20));
      check(expect_code(sandbox, "new ArrayBuffer(64 << 20).byteLength",
                        corral::FailureCode::memory_limit));
    }
    {
      // GC pressure: far more garbage than the limit, little of it live.
      Sandbox sandbox(bounded(20s, 32u << 20));
      check(
          expect_value(sandbox,
                       "let n = 0; for (let i = 0; i < 2000; i++) { const s = 'x'.repeat(1e4) + i;"
                       " n += s.length; } n > 0",
                       "true"));
      check(
          expect_value(sandbox,
                       "const big = []; for (let i = 0; i < 20000; i++) big.push({i, s: 'v' + i});"
                       " JSON.parse(JSON.stringify(big)).length",
                       "20000"));
      check(expect_value(sandbox, "'y'.repeat(8 << 20).length", "8388608"));
    }
    {
      Sandbox sandbox(bounded(5s, 64u << 20, corral::sandbox::Profile::permissive));
      check(expect_value(sandbox,
                         "[typeof new Date().toString(), typeof new Date().toLocaleString(),"
                         " typeof new Intl.DateTimeFormat('en-US').format(0),"
                         " 'a'.localeCompare('b'), (1234.5).toLocaleString('en-US'),"
                         " typeof Math.random()]",
                         R"(["string","string","string",-1,"1,234.5","number"])"));
    }
    {
      // Async tools answered from other threads (threads made after lockdown).
      Sandbox sandbox(bounded(10s));
      sandbox.bind_async("codemode.later", [](std::string args, ToolReply reply) {
        std::thread([args = std::move(args), reply] {
          std::this_thread::sleep_for(2ms);
          reply.resolve(args);
        }).detach();
      });
      sandbox.bind("codemode.echo", [](std::string_view args) { return std::string(args); });
      check(expect_value(sandbox,
                         "async () => { const xs = await Promise.all(Array.from({length: 20},"
                         " (_, i) => codemode.later({i}))); return xs.map(x => x.i).reduce((a, b)"
                         " => a + b) + codemode.echo({n: 1}).n; }",
                         "191"));
    }
    {
      // Cancel from another thread.
      Sandbox sandbox(bounded(10s));
      std::thread canceller([&] {
        std::this_thread::sleep_for(50ms);
        sandbox.cancel();
      });
      check(expect_code(sandbox, "while (true) {}", corral::FailureCode::cancelled));
      canceller.join();
    }
    {
      // Several isolates at once, each on its own thread.
      std::vector<std::thread> threads;
      std::atomic<int> good{0};
      for (int i = 0; i < 3; ++i) {
        threads.emplace_back([&good] {
          Sandbox sandbox(bounded(5s));
          if (run(sandbox, "Array.from({length: 1000}, (_, i) => i).reduce((a, b) => a + b)")
                  .value == "499500")
            ++good;
        });
      }
      for (auto& thread : threads) thread.join();
      if (good != 3) check("concurrent sandboxes: " + std::to_string(good.load()) + " of 3");
    }
  }
  return problem;
}

// ---- attempts: forbidden operations, done directly ----

// Returns the syscall's result; -errno on failure.
long result_of(long rc) { return rc < 0 ? -errno : rc; }

std::string describe(long rc) {
  if (rc >= 0) return "allowed " + std::to_string(rc);
  const char* name = strerrorname_np(static_cast<int>(-rc));
  return std::string("refused ") + (name ? name : std::to_string(-rc).c_str());
}

long attempt(const std::string& op, pid_t other) {
  static char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
  static char* const envp[] = {nullptr};
  if (op == "execve") return result_of(::execve("/bin/true", argv, envp));
  if (op == "execveat")
    return result_of(::syscall(SYS_execveat, AT_FDCWD, "/bin/true", argv, envp, 0));
  if (op == "fork") {
    const long rc = ::syscall(SYS_fork);
    if (rc == 0) ::_exit(0);
    return result_of(rc);
  }
  if (op == "clone_process") {
    const long rc = ::syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
    if (rc == 0) ::_exit(0);
    return result_of(rc);
  }
  if (op == "clone_thread_newuser") {
    // Thread flags plus a namespace: refused (the kernel would say EINVAL).
    return result_of(
        ::syscall(SYS_clone, CLONE_VM | CLONE_THREAD | CLONE_SIGHAND | CLONE_NEWNET, 0, 0, 0, 0));
  }
  if (op == "clone3") {
    clone_args args{};
    args.exit_signal = SIGCHLD;
    const long rc = ::syscall(SYS_clone3, &args, sizeof args);
    if (rc == 0) ::_exit(0);
    return result_of(rc);
  }
  if (op == "thread") {
    std::atomic<int> ran{0};
    std::thread([&] { ran = 1; }).join();
    return ran.load();
  }
  if (op == "socket_inet") return result_of(::socket(AF_INET, SOCK_STREAM, 0));
  if (op == "socket_unix") return result_of(::socket(AF_UNIX, SOCK_STREAM, 0));
  if (op == "socketpair") {
    int pair[2];
    return result_of(::socketpair(AF_UNIX, SOCK_STREAM, 0, pair));
  }
  if (op == "connect") {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strcpy(address.sun_path, "/tmp/corral-nowhere");
    return result_of(::connect(kFd, reinterpret_cast<sockaddr*>(&address), sizeof address));
  }
  if (op == "open") return result_of(::syscall(SYS_open, "/etc/passwd", O_RDONLY));
  if (op == "openat") return result_of(::openat(AT_FDCWD, "/etc/passwd", O_RDONLY));
  if (op == "openat2") {
    struct {
      std::uint64_t flags, mode, resolve;
    } how{O_RDONLY, 0, 0};
    return result_of(::syscall(SYS_openat2, AT_FDCWD, "/etc/passwd", &how, sizeof how));
  }
  if (op == "creat") return result_of(::creat("/tmp/corral-lockdown-creat", 0600));
  if (op == "memfd_create") return result_of(::syscall(SYS_memfd_create, "x", 0));
  if (op == "ptrace_attach") return result_of(::ptrace(PTRACE_ATTACH, other, 0, 0));
  if (op == "ptrace_traceme") return result_of(::ptrace(PTRACE_TRACEME, 0, 0, 0));
  if (op == "process_vm_readv") {
    char byte = 0;
    iovec local{&byte, 1}, remote{&byte, 1};
    return result_of(::process_vm_readv(other, &local, 1, &remote, 1, 0));
  }
  if (op == "kill_other") return result_of(::kill(other, 0));
  if (op == "kill_group") return result_of(::kill(0, 0));
  if (op == "kill_all") return result_of(::kill(-1, 0));
  if (op == "kill_self") return result_of(::kill(::getpid(), 0));
  if (op == "tgkill_other") return result_of(::syscall(SYS_tgkill, other, other, 0));
  if (op == "mount") return result_of(::mount("none", "/tmp", "tmpfs", 0, nullptr));
  if (op == "unshare") return result_of(::unshare(CLONE_NEWUSER));
  if (op == "setns") return result_of(::setns(kFd, 0));
  if (op == "chroot") return result_of(::chroot("/tmp"));
  if (op == "bpf") return result_of(::syscall(SYS_bpf, 0, nullptr, 0));
  if (op == "perf_event_open")
    return result_of(::syscall(SYS_perf_event_open, nullptr, 0, -1, -1, 0));
  if (op == "userfaultfd") return result_of(::syscall(SYS_userfaultfd, 0));
  if (op == "io_uring_setup") return result_of(::syscall(SYS_io_uring_setup, 1, nullptr));
  if (op == "keyctl") return result_of(::syscall(SYS_keyctl, 0, 0, 0, 0, 0));
  if (op == "x32_getpid") return result_of(::syscall(0x40000000 | SYS_getpid));
  if (op == "raise_core_limit") {
    const rlimit unlimited{RLIM_INFINITY, RLIM_INFINITY};
    return result_of(::setrlimit(RLIMIT_CORE, &unlimited));
  }
  if (op == "raise_nofile_limit") {
    const rlimit more{4096, 4096};
    return result_of(::prlimit(0, RLIMIT_NOFILE, &more, nullptr));
  }
  if (op == "read_core_limit") {
    rlimit limit{};
    const long rc = result_of(::getrlimit(RLIMIT_CORE, &limit));
    return rc < 0 ? rc : static_cast<long>(limit.rlim_max);
  }
  if (op == "setuid") return result_of(::setuid(1000));
  if (op == "no_new_privs") return result_of(::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
  if (op == "prctl_dumpable") return result_of(::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0));
  if (op == "tiocsti") {
    char c = 'x';
    return result_of(::ioctl(2, TIOCSTI, &c));
  }
  if (op == "closed_fd") return result_of(::write(5, "x", 1));
  if (op == "jit_page") {
    void* page = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return -errno;
    const long rc = result_of(::mprotect(page, 4096, PROT_READ | PROT_EXEC));
    ::munmap(page, 4096);
    return rc;
  }
  if (op == "getpid") return ::getpid();
#if defined(__SANITIZE_ADDRESS__)
  if (op == "asan_report") {
    // A heap-use-after-free: the sanitizer's report must get out to stderr
    // under the policy, and the process end with the sanitizer's exit code.
    auto* volatile bytes = new char[16];
    delete[] bytes;
    return bytes[3];
  }
#endif
  return -ENOSYS;
}

}  // namespace

int main(int argc, char** argv) {
  bool namespaces = true, lockdown = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no-namespaces") == 0) namespaces = false;
    if (std::strcmp(argv[i], "--no-lockdown") == 0) lockdown = false;
  }
  corral::pool::Protections protections;
  if (namespaces) corral::pool::enter_namespaces(protections);
  {
    Sandbox warm_up(bounded(10s));
    warm_up.bind_async("codemode.warm", [](std::string, ToolReply reply) { reply.resolve("1"); });
    run(warm_up, "async () => JSON.stringify({a: [1, 'b']}) + await codemode.warm({})");
  }
  if (lockdown) {
    try {
      corral::pool::lock_down(kFd, protections);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "lockdown_probe: %s\n", e.what());
      ::_exit(70);
    }
  } else {
    // A marker for strace: everything after it is what V8 does once locked.
    ::syscall(SYS_getcpu, nullptr, nullptr, reinterpret_cast<void*>(0x10cd0));
  }
  send_line("ready " + std::to_string(::getpid()) + " " + corral::pool::to_json(protections));
  while (const auto line = read_line()) {
    if (*line == "exit") break;
    if (*line == "workloads") {
      const std::string problem = workloads();
      send_line(problem.empty() ? "ok" : "fail " + problem);
    } else if (line->rfind("attempt ", 0) == 0) {
      std::string op = line->substr(8);
      pid_t other = 0;
      if (const auto space = op.find(' '); space != std::string::npos) {
        other = static_cast<pid_t>(std::stol(op.substr(space + 1)));
        op.resize(space);
      }
      send_line(describe(attempt(op, other)));
    } else {
      send_line("fail unknown command");
    }
  }
  // Never exit(): V8's threads are still running, and under a sanitizer the
  // at-exit leak check would fork a tracer, which the policy kills.
  ::_exit(0);
}
