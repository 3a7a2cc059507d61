#include "pool/lockdown.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/json.hpp"
#include "pool/startup_pages.hpp"
#include "sandbox/seccomp_policy.hpp"

namespace corral::pool {
namespace {

namespace json = core::json;  // Boost.JSON with corral's writer

std::string failed(std::string_view what) {
  return std::string(what) + ": " + std::strerror(errno);
}

// Writes `text` to a /proc file in one write(), as the id-map files require.
bool write_proc_file(const char* path, const std::string& text) {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = ::write(fd, text.data(), text.size());
  const int saved = errno;
  ::close(fd);
  errno = saved;
  return n == static_cast<ssize_t>(text.size());
}

void enter_user_namespace(Protections& protections) {
  const uid_t uid = ::geteuid();
  const gid_t gid = ::getegid();
  if (::unshare(CLONE_NEWUSER) != 0) {
    protections.notes.push_back(failed("user namespace: unshare"));
    return;
  }
  // Map our own ids to themselves: the worker keeps its identity on files
  // it already holds and gains nothing outside. setgroups must be denied
  // before an unprivileged gid_map write.
  const std::string uid_line = std::to_string(uid) + " " + std::to_string(uid) + " 1\n";
  const std::string gid_line = std::to_string(gid) + " " + std::to_string(gid) + " 1\n";
  if (!write_proc_file("/proc/self/uid_map", uid_line)) {
    protections.notes.push_back(failed("user namespace: uid_map"));
  } else if (!write_proc_file("/proc/self/setgroups", "deny")) {
    protections.notes.push_back(failed("user namespace: setgroups"));
  } else if (!write_proc_file("/proc/self/gid_map", gid_line)) {
    protections.notes.push_back(failed("user namespace: gid_map"));
  }
  // Entered even when a map failed: unmapped ids only ever lose access.
  protections.user_namespace = true;
}

void close_range_of(unsigned first, unsigned last) {
  if (first > last) return;
  if (::syscall(SYS_close_range, first, last, 0) == 0) return;
  const long open_max = ::sysconf(_SC_OPEN_MAX);
  const unsigned bound = open_max > 0 ? static_cast<unsigned>(open_max) : 65536u;
  for (unsigned fd = first; fd <= last && fd < bound; ++fd) ::close(static_cast<int>(fd));
}

// Signals the reaper passes on to the worker.
constexpr int kForwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};

[[noreturn]] void exit_like(int status) {
  if (WIFEXITED(status)) ::_exit(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) ::_exit(128 + WTERMSIG(status));
  ::_exit(1);
}

// The parent after the pid-namespace fork: waits for the worker, forwards
// termination signals to it, and leaves with its status. Single-threaded,
// forked from a single-threaded process: only async-signal-safe calls.
[[noreturn]] void reap(pid_t child, int alive_fd) {
  // Hold nothing the worker holds (above all not the IPC socket, so that
  // the pool sees EOF the moment the worker dies); keep `alive_fd`, the
  // write end of the pipe whose hang-up tells the worker we are gone.
  close_range_of(3, static_cast<unsigned>(alive_fd) - 1);
  close_range_of(static_cast<unsigned>(alive_fd) + 1, ~0u);
  const struct rlimit no_core { 0, 0 };
  ::setrlimit(RLIMIT_CORE, &no_core);
  // It runs a loop of a few libc calls from here on: libnode's and ICU's
  // pages, faulted in before the fork, go back (startup_pages.hpp).
  drop_startup_pages(false);
  sigset_t waited;
  sigemptyset(&waited);
  sigaddset(&waited, SIGCHLD);
  for (int sig : kForwarded) sigaddset(&waited, sig);
  for (;;) {
    siginfo_t info;
    const int sig = ::sigwaitinfo(&waited, &info);
    if (sig < 0) continue;
    if (sig != SIGCHLD) {
      ::kill(child, sig);
      continue;
    }
    int status = 0;
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child) exit_like(status);
    if (done < 0 && errno == ECHILD) ::_exit(1);
  }
}

// The worker is init of its pid namespace; the kernel drops signals with
// the default action that reach an init, so these stand in for it.
void exit_on_signal(int sig) { ::_exit(128 + sig); }

void enter_pid_namespace(Protections& protections) {
  if (::unshare(CLONE_NEWPID) != 0) {
    protections.notes.push_back(failed("pid namespace: unshare"));
    return;
  }
  int alive[2];
  if (::pipe2(alive, O_CLOEXEC) != 0) {
    protections.notes.push_back(failed("pid namespace: pipe"));
    return;
  }
  sigset_t block, previous;
  sigemptyset(&block);
  sigaddset(&block, SIGCHLD);
  for (int sig : kForwarded) sigaddset(&block, sig);
  ::sigprocmask(SIG_BLOCK, &block, &previous);
  const pid_t child = ::fork();
  if (child < 0) {
    protections.notes.push_back(failed("pid namespace: fork"));
    ::sigprocmask(SIG_SETMASK, &previous, nullptr);
    ::close(alive[0]);
    ::close(alive[1]);
    return;
  }
  if (child > 0) {
    ::close(alive[0]);
    reap(child, alive[1]);
  }
  // The worker: pid 1 in the new namespace. Die with the reaper; if it died
  // before the death signal was armed, its end of `alive` has hung up.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  ::close(alive[1]);
  pollfd hangup{alive[0], POLLIN, 0};
  if (::poll(&hangup, 1, 0) != 0) ::_exit(1);
  ::close(alive[0]);
  struct sigaction action {};
  action.sa_handler = exit_on_signal;
  sigemptyset(&action.sa_mask);
  for (int sig : kForwarded) ::sigaction(sig, &action, nullptr);
  ::sigprocmask(SIG_SETMASK, &previous, nullptr);
  protections.pid_namespace = true;
}

// ---- rlimits ---------------------------------------------------------------

// Open files after the lockdown: the IPC socket, 0-2, and room for the
// eventfds and pipes a worker's loop may create. V8 opens none after start.
constexpr rlim_t kMaxOpenFiles = 64;
// Threads the worker may add after the lockdown (runner threads, V8's lazily
// started helpers, tool threads), counted in its own user namespace.
constexpr rlim_t kSpareThreads = 64;

bool set_limit(int resource, rlim_t value) {
  struct rlimit current {};
  if (::getrlimit(resource, &current) != 0) return false;
  if (current.rlim_max != RLIM_INFINITY && current.rlim_max < value) value = current.rlim_max;
  const struct rlimit limit { value, value };
  return ::setrlimit(resource, &limit) == 0;
}

// Threads of this process now, from /proc/self/status ("Threads:\tN").
long thread_count() {
  const int fd = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  std::string text(8192, '\0');
  const ssize_t n = ::read(fd, text.data(), text.size());
  ::close(fd);
  if (n <= 0) return -1;
  text.resize(static_cast<std::size_t>(n));
  const auto at = text.find("\nThreads:");
  if (at == std::string::npos) return -1;
  return std::strtol(text.c_str() + at + 9, nullptr, 10);
}

void set_rlimits(int keep_fd, Protections& protections) {
  bool ok = set_limit(RLIMIT_CORE, 0);
  if (!ok) protections.notes.push_back(failed("rlimits: RLIMIT_CORE"));
  const rlim_t files = std::max<rlim_t>(kMaxOpenFiles, static_cast<rlim_t>(keep_fd) + 16);
  if (!set_limit(RLIMIT_NOFILE, files)) {
    protections.notes.push_back(failed("rlimits: RLIMIT_NOFILE"));
    ok = false;
  }
  // RLIMIT_NPROC counts every task of the real uid in the user namespace
  // the limit is checked in. Only in a namespace of our own does that mean
  // "this worker's threads"; elsewhere it would count the user's other
  // processes too. The kernel never applies it to uid 0.
  if (!protections.user_namespace) {
    protections.notes.push_back("rlimits: RLIMIT_NPROC left as is (no user namespace of our own)");
  } else if (const long threads = thread_count(); threads <= 0) {
    protections.notes.push_back(failed("rlimits: RLIMIT_NPROC: counting threads"));
    ok = false;  // attempted and not in force: not reported as active
  } else if (!set_limit(RLIMIT_NPROC, static_cast<rlim_t>(threads) + 1 + kSpareThreads)) {
    protections.notes.push_back(failed("rlimits: RLIMIT_NPROC"));
    ok = false;
  } else if (::getuid() == 0) {
    protections.notes.push_back("rlimits: RLIMIT_NPROC is set but the kernel ignores it for uid 0");
  }
  protections.rlimits = ok;
}

// ---- file descriptors ------------------------------------------------------

// 0 and 1 point at /dev/null. 2 is kept when it is open: it is where V8's
// fatal-error messages and sanitizer reports go, and the spawner chose it
// (the pool gives a pipe it reads with a bound, or /dev/null). Everything
// else but `keep_fd` is closed.
void close_fds(int keep_fd, Protections& protections) {
  // Without /dev/null (an odd chroot), 0 and 1 stay as inherited; the rest
  // is still closed.
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0) protections.notes.push_back(failed("fds: /dev/null (stdin, stdout kept)"));
  for (int fd = 0; fd <= 1 && null_fd >= 0; ++fd)
    if (fd != keep_fd && fd != null_fd) ::dup2(null_fd, fd);
  if (2 != keep_fd && ::fcntl(2, F_GETFD) < 0 && null_fd >= 0) ::dup2(null_fd, 2);
  if (null_fd > 2) ::close(null_fd);
  if (keep_fd < 0) {
    close_range_of(3, ~0u);
  } else {
    if (keep_fd > 3) close_range_of(3, static_cast<unsigned>(keep_fd) - 1);
    close_range_of(std::max(3u, static_cast<unsigned>(keep_fd) + 1), ~0u);
  }
  protections.fds_closed = true;
}

// ---- probe -----------------------------------------------------------------

Protections from_json(std::string_view text) {
  Protections protections;
  const json::value parsed = json::parse(text);
  const json::object& object = parsed.as_object();
  auto flag = [&](const char* key) { return object.at(key).as_bool(); };
  protections.user_namespace = flag("user_namespace");
  protections.network_namespace = flag("network_namespace");
  protections.pid_namespace = flag("pid_namespace");
  protections.parent_death_signal = flag("parent_death_signal");
  protections.fds_closed = flag("fds_closed");
  protections.rlimits = flag("rlimits");
  protections.no_new_privs = flag("no_new_privs");
  protections.seccomp = flag("seccomp");
  for (const json::value& note : object.at("notes").as_array())
    protections.notes.emplace_back(note.as_string());
  return protections;
}

}  // namespace

std::string to_json(const Protections& protections) {
  json::object object;
  object["user_namespace"] = protections.user_namespace;
  object["network_namespace"] = protections.network_namespace;
  object["pid_namespace"] = protections.pid_namespace;
  object["parent_death_signal"] = protections.parent_death_signal;
  object["fds_closed"] = protections.fds_closed;
  object["rlimits"] = protections.rlimits;
  object["no_new_privs"] = protections.no_new_privs;
  object["seccomp"] = protections.seccomp;
  json::array& notes = object["notes"].emplace_array();
  for (const std::string& note : protections.notes) notes.emplace_back(note);
  return json::serialize(object);
}

void enter_namespaces(Protections& protections) {
  // Die with whoever spawned us; the pid-namespace child arms its own.
  protections.parent_death_signal = ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == 0;
  enter_user_namespace(protections);
  if (::unshare(CLONE_NEWNET) == 0) {
    protections.network_namespace = true;
  } else {
    protections.notes.push_back(failed("network namespace: unshare"));
  }
  enter_pid_namespace(protections);
}

void lock_down(int keep_fd, Protections& protections) {
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == 0) {
    protections.parent_death_signal = true;
  } else {
    protections.parent_death_signal = false;
    protections.notes.push_back(failed("parent death signal: prctl"));
  }
  close_fds(keep_fd, protections);
  set_rlimits(keep_fd, protections);
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    throw std::runtime_error(failed("no_new_privs: prctl"));
  protections.no_new_privs = true;
  sandbox::install_seccomp_policy();
  protections.seccomp = true;
}

Protections probe_protections() {
  Protections protections;
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    protections.notes.push_back(failed("probe: pipe"));
    return protections;
  }
  const pid_t child = ::fork();
  if (child < 0) {
    protections.notes.push_back(failed("probe: fork"));
    ::close(report[0]);
    ::close(report[1]);
    return protections;
  }
  if (child == 0) {
    ::close(report[0]);
    Protections found;
    enter_namespaces(found);
    try {
      lock_down(report[1], found);
    } catch (const std::exception& e) {
      found.notes.emplace_back(e.what());
    }
    const std::string text = to_json(found);
    const ssize_t n = ::write(report[1], text.data(), text.size());
    ::_exit(n == static_cast<ssize_t>(text.size()) ? 0 : 1);
  }
  ::close(report[1]);
  std::string text;
  char buffer[4096];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd readable{report[0], POLLIN, 0};
    if (left.count() <= 0 || ::poll(&readable, 1, static_cast<int>(left.count())) == 0) {
      ::kill(child, SIGKILL);
      protections.notes.push_back("probe: no answer within 10s");
      break;
    }
    const ssize_t n = ::read(report[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(report[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  try {
    if (!text.empty()) return from_json(text);
  } catch (const std::exception& e) {
    protections.notes.push_back(std::string("probe: bad report: ") + e.what());
  }
  if (WIFSIGNALED(status)) {
    protections.notes.push_back("probe: child killed by signal " +
                                std::to_string(WTERMSIG(status)));
  } else if (text.empty()) {
    protections.notes.push_back("probe: child exited with status " +
                                std::to_string(WEXITSTATUS(status)));
  }
  return protections;
}

}  // namespace corral::pool
