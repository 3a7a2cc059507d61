// src/pool/worker_process.cc: posix_spawn of a worker with a closed inheritance.
#include "pool/worker_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include "sandbox/guest_spawn.hpp"

extern char** environ;

namespace corral::pool {

namespace {

std::runtime_error failed(const std::string& what, int error) {
  return std::runtime_error(what + ": " + std::strerror(error));
}

// The worker gets no environment but the sanitizer settings tests use.
std::vector<std::string> worker_environment() {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string_view entry(*e);
    if (entry.starts_with("ASAN_OPTIONS=") || entry.starts_with("UBSAN_OPTIONS=") ||
        entry.starts_with("LSAN_OPTIONS="))
      env.emplace_back(entry);
  }
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// posix_spawn with fds 0-3 as the header says and nothing else inherited.
// Returns the pid, or throws; `socket_end` and `stderr_end` stay the caller's.
pid_t spawn_with(std::vector<std::string>& args, int socket_end, int stderr_end) {
  std::vector<std::string> env = worker_environment();
  std::vector<char*> argv = pointers(args);
  std::vector<char*> envp = pointers(env);
  pid_t pid = 0;
  const int rc = sandbox::spawn_guest_process(
      pid, argv[0], argv.data(), envp.data(),
      {{0, sandbox::kDevNullRead}, {1, sandbox::kDevNullWrite}, {2, stderr_end}, {3, socket_end}});
  if (rc != 0) throw failed("posix_spawn " + args[0], rc);
  return pid;
}

}  // namespace

std::vector<std::string> default_worker_command() {
  char path[4096];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return {"/proc/self/exe", "worker"};
  return {std::string(path, static_cast<std::size_t>(n)), "worker"};
}

std::vector<std::string> worker_arguments(const Options& options) {
  std::vector<std::string> args = options.worker_command;
  args.push_back("--ipc-fd=3");
  args.push_back("--max-frame=" + std::to_string(options.max_frame));
  if (options.worker_memory_ceiling != 0) {
    args.push_back("--memory-ceiling=" + std::to_string(options.worker_memory_ceiling));
  }
  if (!options.harden_workers) args.push_back("--no-harden");
  return args;
}

LaunchedWorker launch_worker(const Options& options) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    throw failed("socketpair", errno);
  }
  int child_end = fds[1];
  if (child_end == 3) {  // dup2 onto itself would keep FD_CLOEXEC
    child_end = ::fcntl(fds[1], F_DUPFD_CLOEXEC, 4);
    ::close(fds[1]);
  }
  int err[2] = {-1, -1};
  if (::pipe2(err, O_CLOEXEC) != 0) {
    const int error = errno;
    ::close(fds[0]);
    ::close(child_end);
    throw failed("pipe2", error);
  }
  std::vector<std::string> args = worker_arguments(options);
  pid_t pid = 0;
  try {
    pid = spawn_with(args, child_end, err[1]);
  } catch (...) {
    ::close(child_end);
    ::close(err[1]);
    ::close(err[0]);
    ::close(fds[0]);
    throw;
  }
  ::close(child_end);
  ::close(err[1]);
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    const int error = errno;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    ::close(err[0]);
    ::close(fds[0]);
    throw failed("pidfd_open", error);
  }
  return LaunchedWorker{.pid = pid, .pidfd = pidfd, .socket = fds[0], .stderr_fd = err[0]};
}

}  // namespace corral::pool
