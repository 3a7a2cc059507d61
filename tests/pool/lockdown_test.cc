// tests/pool/lockdown_test.cc: the worker lockdown, seen from outside.
//
// Each test starts lockdown_probe (a worker-like process: namespaces, V8
// and a warm-up run, lockdown) with a socket on fd 3, then checks what the
// kernel says about it (/proc) and what happens when it tries things the
// policy forbids.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "pool/lockdown.hpp"

extern char** environ;

namespace corral::pool {
namespace {

using namespace std::chrono_literals;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The value of "Key:" in a /proc status file, trimmed.
std::string status_field(const std::string& status, const std::string& key) {
  const auto at = status.find("\n" + key + ":");
  if (at == std::string::npos) return "";
  auto begin = status.find_first_not_of(" \t", at + key.size() + 2);
  return status.substr(begin, status.find('\n', begin) - begin);
}

// Probe: one lockdown_probe process, talked to over fd 3.
class Probe {
 public:
  // `stderr_path`: where the probe's fd 2 goes (default: ours).
  explicit Probe(std::vector<std::string> flags = {}, const std::string& stderr_path = "") {
    int pair[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
    fd_ = pair[0];
    // Above 3 so that the dup2 below always happens (and clears CLOEXEC).
    const int child_end = ::fcntl(pair[1], F_DUPFD_CLOEXEC, 10);
    ::close(pair[1]);
    // A stray inherited descriptor the lockdown must close.
    int stray[2];
    EXPECT_EQ(::pipe2(stray, O_CLOEXEC), 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, child_end, 3);
    posix_spawn_file_actions_adddup2(&actions, stray[0], 7);
    if (!stderr_path.empty())
      posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(),
                                       O_WRONLY | O_CREAT | O_TRUNC, 0600);
    std::vector<std::string> args{CORRAL_LOCKDOWN_PROBE};
    args.insert(args.end(), flags.begin(), flags.end());
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    EXPECT_EQ(::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    ::close(child_end);
    ::close(stray[0]);
    ::close(stray[1]);
    const auto ready = read_line(120s);
    if (!ready || ready->rfind("ready ", 0) != 0) {
      ADD_FAILURE() << "probe did not get ready: " << ready.value_or("(EOF)");
      return;
    }
    std::istringstream words(ready->substr(6));
    words >> inner_pid_;
    std::getline(words >> std::ws, protections_json_);
  }

  ~Probe() {
    if (pid_ > 0 && !status_) {
      ::kill(pid_, SIGKILL);
      wait();
    }
    ::close(fd_);
  }

  // The answer to `command`, or nullopt when the probe went away.
  std::optional<std::string> ask(const std::string& command, std::chrono::seconds bound = 60s) {
    const std::string line = command + "\n";
    if (::send(fd_, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size()))
      return std::nullopt;
    return read_line(bound);
  }

  // The probe's wait status (waits for it to end).
  int wait() {
    if (!status_) {
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      status_ = status;
    }
    return *status_;
  }

  pid_t pid() const { return pid_; }
  // getpid() as the locked-down process sees it.
  pid_t inner_pid() const { return inner_pid_; }
  const std::string& protections_json() const { return protections_json_; }

  // The locked-down process as this test sees it: the probe itself, or,
  // when it is pid 1 of its own pid namespace, the probe's only child.
  pid_t worker() const {
    if (inner_pid_ != 1) return pid_;
    const std::string children =
        slurp("/proc/" + std::to_string(pid_) + "/task/" + std::to_string(pid_) + "/children");
    return static_cast<pid_t>(std::atol(children.c_str()));
  }
  std::string proc(const std::string& file) const {
    return "/proc/" + std::to_string(worker()) + "/" + file;
  }

 private:
  std::optional<std::string> read_line(std::chrono::seconds bound) {
    const auto deadline = std::chrono::steady_clock::now() + bound;
    for (;;) {
      if (const auto end = pending_.find('\n'); end != std::string::npos) {
        std::string line = pending_.substr(0, end);
        pending_.erase(0, end + 1);
        return line;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd readable{fd_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&readable, 1, static_cast<int>(left.count())) <= 0)
        return std::nullopt;
      char buffer[4096];
      const ssize_t n = ::read(fd_, buffer, sizeof buffer);
      if (n <= 0) return std::nullopt;
      pending_.append(buffer, static_cast<std::size_t>(n));
    }
  }

  int fd_ = -1;
  pid_t pid_ = -1;
  pid_t inner_pid_ = 0;
  std::string protections_json_;
  std::string pending_;
  std::optional<int> status_;
};

// True when the status is a death by SIGSYS: directly, or as the pid
// namespace's reaper reports it (128 + signal).
bool killed_by_policy(int status) {
  return (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS) ||
         (WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGSYS);
}

TEST(Lockdown, ReportsEveryProtectionItApplied) {
  Probe probe;
  const std::string& json = probe.protections_json();
  for (const char* key :
       {"parent_death_signal", "fds_closed", "rlimits", "no_new_privs", "seccomp"})
    EXPECT_NE(json.find(std::string("\"") + key + "\":true"), std::string::npos) << key << json;
}

TEST(Lockdown, EveryThreadHasNoNewPrivsAndTheFilter) {
  Probe probe;
  const std::string task_dir = probe.proc("task");
  int threads = 0;
  for (const auto& task : std::filesystem::directory_iterator(task_dir)) {
    const std::string status = slurp(task.path().string() + "/status");
    EXPECT_EQ(status_field(status, "NoNewPrivs"), "1") << task.path();
    EXPECT_EQ(status_field(status, "Seccomp"), "2") << task.path();
    ++threads;
  }
  // V8's platform workers and the watchdog started before the lockdown.
  EXPECT_GT(threads, 1);
}

TEST(Lockdown, OnlyStdioAndTheIpcSocketStayOpen) {
  Probe probe;
  std::set<int> open;
  for (const auto& fd : std::filesystem::directory_iterator(probe.proc("fd")))
    open.insert(std::stoi(fd.path().filename().string()));
  EXPECT_EQ(open, (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(std::filesystem::read_symlink(probe.proc("fd/0")), "/dev/null");
  EXPECT_EQ(std::filesystem::read_symlink(probe.proc("fd/1")), "/dev/null");
  // stderr stays where the spawner pointed it: ours.
  EXPECT_EQ(std::filesystem::read_symlink(probe.proc("fd/2")),
            std::filesystem::read_symlink("/proc/self/fd/2"));
  EXPECT_EQ(probe.ask("attempt closed_fd"), "refused EBADF");
}

TEST(Lockdown, NoCoreDumpsAndFewOpenFiles) {
  Probe probe;
  const std::string limits = slurp(probe.proc("limits"));
  EXPECT_NE(limits.find("Max core file size        0                    0"), std::string::npos)
      << limits;
  EXPECT_NE(limits.find("Max open files            64                   64"), std::string::npos)
      << limits;
  EXPECT_EQ(probe.ask("attempt read_core_limit"), "allowed 0");
}

TEST(Lockdown, SandboxesKeepWorkingAfterLockdown) {
  // New isolates, timeouts, memory limits, GC pressure, big strings and
  // JSON, async tools answered from new threads, cancel, Intl and Date.
  Probe probe;
  EXPECT_EQ(probe.ask("workloads", 280s), "ok");
  EXPECT_EQ(probe.ask("attempt thread"), "allowed 1");
  probe.ask("exit");
  EXPECT_TRUE(WIFEXITED(probe.wait()) && WEXITSTATUS(probe.wait()) == 0) << probe.wait();
}

TEST(Lockdown, WorksWithoutNamespaces) {
  Probe probe({"--no-namespaces"});
  EXPECT_NE(probe.inner_pid(), 1);
  EXPECT_EQ(probe.ask("attempt kill_self"), "allowed 0");
  EXPECT_EQ(probe.ask("workloads", 280s), "ok");
  // No reaper in between: the kernel's verdict reaches us unchanged.
  EXPECT_EQ(probe.ask("attempt kill_other " + std::to_string(::getpid())), std::nullopt);
  const int status = probe.wait();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS) << status;
}

// ---- the policy, one forbidden operation per probe ----

enum class Verdict { killed, refused, allowed };

struct Case {
  const char* op;
  Verdict verdict;
  const char* answer;  // the probe's line, for refused and allowed
};

const Case kCases[] = {
    {"execve", Verdict::killed, nullptr},
    {"execveat", Verdict::killed, nullptr},
    {"fork", Verdict::killed, nullptr},
    {"clone_process", Verdict::killed, nullptr},
    {"clone_thread_newuser", Verdict::refused, "refused EPERM"},
    {"clone3", Verdict::refused, "refused ENOSYS"},
    {"thread", Verdict::allowed, "allowed 1"},
    {"socket_inet", Verdict::killed, nullptr},
    {"socket_unix", Verdict::killed, nullptr},
    {"socketpair", Verdict::killed, nullptr},
    {"connect", Verdict::killed, nullptr},
    {"open", Verdict::refused, "refused EPERM"},
    {"openat", Verdict::refused, "refused EPERM"},
    {"openat2", Verdict::refused, "refused EPERM"},
    {"creat", Verdict::refused, "refused EPERM"},
    {"memfd_create", Verdict::refused, "refused EPERM"},
    {"ptrace_attach", Verdict::killed, nullptr},
    {"ptrace_traceme", Verdict::killed, nullptr},
    {"process_vm_readv", Verdict::killed, nullptr},
    {"kill_other", Verdict::killed, nullptr},
    {"kill_group", Verdict::killed, nullptr},
    {"kill_all", Verdict::killed, nullptr},
    {"kill_self", Verdict::allowed, "allowed 0"},
    {"tgkill_other", Verdict::killed, nullptr},
    {"mount", Verdict::killed, nullptr},
    {"unshare", Verdict::killed, nullptr},
    {"setns", Verdict::killed, nullptr},
    {"chroot", Verdict::killed, nullptr},
    {"bpf", Verdict::killed, nullptr},
    {"perf_event_open", Verdict::killed, nullptr},
    {"userfaultfd", Verdict::killed, nullptr},
    {"io_uring_setup", Verdict::killed, nullptr},
    {"keyctl", Verdict::killed, nullptr},
    {"x32_getpid", Verdict::killed, nullptr},
    {"raise_core_limit", Verdict::refused, "refused EPERM"},
    {"raise_nofile_limit", Verdict::refused, "refused EPERM"},
    {"setuid", Verdict::refused, "refused EPERM"},
    {"no_new_privs", Verdict::refused, "refused EPERM"},
    {"prctl_dumpable", Verdict::refused, "refused EPERM"},
    {"tiocsti", Verdict::refused, "refused ENOTTY"},
    {"jit_page", Verdict::allowed, "allowed 0"},
};

// Names the case in gtest's output instead of dumping its bytes.
void PrintTo(const Case& c, std::ostream* out) { *out << c.op; }

class Policy : public ::testing::TestWithParam<Case> {};

TEST_P(Policy, Enforced) {
  const Case& c = GetParam();
  Probe probe;
  // Operations on another process aim at this test process (signal 0,
  // nothing is sent even if the policy failed).
  const auto answer = probe.ask("attempt " + std::string(c.op) + " " + std::to_string(::getpid()));
  if (c.verdict == Verdict::killed) {
    EXPECT_EQ(answer, std::nullopt) << c.op;
    EXPECT_TRUE(killed_by_policy(probe.wait())) << c.op << ": status " << probe.wait();
  } else {
    EXPECT_EQ(answer, std::string(c.answer)) << c.op;
    // The worker is still fine afterwards.
    EXPECT_EQ(probe.ask("attempt kill_self"), "allowed 0");
  }
}

INSTANTIATE_TEST_SUITE_P(Lockdown, Policy, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.op);
                         });

#if defined(__SANITIZE_ADDRESS__)
TEST(Lockdown, SanitizerReportsGetOutUnderThePolicy) {
  // The report needs only write(2) and mmap; its attempts to read
  // /proc/self/maps and the binary for symbols are refused, so frames are
  // printed as module+offset. The process ends with the sanitizer's own exit
  // code, not SIGSYS.
  const std::string log = ::testing::TempDir() + "lockdown_asan_" + std::to_string(::getpid());
  {
    Probe probe({}, log);
    EXPECT_EQ(probe.ask("attempt asan_report"), std::nullopt);
    const int status = probe.wait();
    EXPECT_FALSE(killed_by_policy(status)) << status;
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << status;
  }
  EXPECT_NE(slurp(log).find("AddressSanitizer: heap-use-after-free"), std::string::npos)
      << slurp(log);
  std::filesystem::remove(log);
}
#endif

// ---- namespaces and the reaper ----

// True when the probe got the namespace `key` names.
bool has(const Probe& probe, const std::string& key) {
  return probe.protections_json().find("\"" + key + "\":true") != std::string::npos;
}

TEST(Namespaces, WorkerIsPidOneOfItsOwnPidNamespace) {
  Probe probe;
  if (!has(probe, "pid_namespace")) GTEST_SKIP() << probe.protections_json();
  EXPECT_EQ(probe.inner_pid(), 1);
  EXPECT_EQ(probe.ask("attempt getpid"), "allowed 1");
  EXPECT_NE(std::filesystem::read_symlink(probe.proc("ns/pid")),
            std::filesystem::read_symlink("/proc/self/ns/pid"));
  // Its parent is the reaper, outside the namespace.
  EXPECT_EQ(status_field(slurp(probe.proc("status")), "PPid"), std::to_string(probe.pid()));
}

TEST(Namespaces, NetworkNamespaceHasOnlyLoopback) {
  Probe probe;
  if (!has(probe, "network_namespace")) GTEST_SKIP() << probe.protections_json();
  EXPECT_NE(std::filesystem::read_symlink(probe.proc("ns/net")),
            std::filesystem::read_symlink("/proc/self/ns/net"));
  std::istringstream dev(slurp(probe.proc("net/dev")));
  std::vector<std::string> interfaces;
  std::string line;
  for (int skip = 0; skip < 2 && std::getline(dev, line); ++skip) {
  }
  while (std::getline(dev, line))
    interfaces.push_back(line.substr(0, line.find(':')).substr(line.find_first_not_of(' ')));
  EXPECT_EQ(interfaces, std::vector<std::string>{"lo"});
}

TEST(Namespaces, UserNamespaceMapsOurOwnIds) {
  Probe probe;
  if (!has(probe, "user_namespace")) GTEST_SKIP() << probe.protections_json();
  EXPECT_NE(std::filesystem::read_symlink(probe.proc("ns/user")),
            std::filesystem::read_symlink("/proc/self/ns/user"));
  std::istringstream map(slurp(probe.proc("uid_map")));
  long inside = -1, outside = -1, count = -1;
  map >> inside >> outside >> count;
  EXPECT_EQ(inside, static_cast<long>(::geteuid()));
  EXPECT_EQ(outside, static_cast<long>(::geteuid()));
  EXPECT_EQ(count, 1);
}

TEST(Namespaces, ReaperForwardsSigtermAndReportsTheWorkersEnd) {
  Probe probe;
  if (!has(probe, "pid_namespace")) GTEST_SKIP() << probe.protections_json();
  ASSERT_EQ(::kill(probe.pid(), SIGTERM), 0);
  const int status = probe.wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM) << status;
}

TEST(Namespaces, WorkerDiesWithTheReaper) {
  Probe probe;
  if (!has(probe, "pid_namespace")) GTEST_SKIP() << probe.protections_json();
  const pid_t worker = probe.worker();
  ASSERT_GT(worker, 0);
  const std::string stat = "/proc/" + std::to_string(worker) + "/stat";
  ASSERT_TRUE(std::filesystem::exists(stat));
  ASSERT_EQ(::kill(probe.pid(), SIGKILL), 0);
  probe.wait();
  // The worker was our grandchild: once the kernel has killed it, init
  // reaps it. Bounded wait for the event, not a sleep-and-hope.
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (std::filesystem::exists(stat) && std::chrono::steady_clock::now() < deadline) {
    const std::string text = slurp(stat);
    const auto state = text.rfind(')');
    if (state != std::string::npos && text.size() > state + 2 && text[state + 2] == 'Z') break;
    std::this_thread::sleep_for(10ms);
  }
  const std::string text = slurp(stat);
  const auto state = text.rfind(')');
  EXPECT_TRUE(text.empty() || (state != std::string::npos && text[state + 2] == 'Z')) << text;
}

// ---- corral check ----

TEST(ProbeProtections, ReportsWhatThisMachineAllows) {
  // This test process has not started V8, as probe_protections requires.
  const Protections found = probe_protections();
  EXPECT_TRUE(found.seccomp) << to_json(found);
  EXPECT_TRUE(found.no_new_privs);
  EXPECT_TRUE(found.fds_closed);
  EXPECT_TRUE(found.rlimits);
  EXPECT_TRUE(found.parent_death_signal);
  // What the probe process reported agrees with a fresh probe.
  Probe probe;
  for (const auto& [key, value] : {std::pair{"user_namespace", found.user_namespace},
                                   std::pair{"network_namespace", found.network_namespace},
                                   std::pair{"pid_namespace", found.pid_namespace}}) {
    EXPECT_NE(
        probe.protections_json().find(std::string("\"") + key + "\":" + (value ? "true" : "false")),
        std::string::npos)
        << key;
  }
}

TEST(ProbeProtections, JsonNamesEveryProtectionAndNote) {
  Protections protections;
  protections.seccomp = true;
  protections.notes = {"pid namespace: unshare: Operation not permitted", "quote \" here"};
  EXPECT_EQ(to_json(protections),
            R"({"user_namespace":false,"network_namespace":false,"pid_namespace":false,)"
            R"("parent_death_signal":false,"fds_closed":false,"rlimits":false,)"
            R"("no_new_privs":false,"seccomp":true,"notes":["pid namespace: unshare: )"
            R"(Operation not permitted","quote \" here"]})");
}

}  // namespace
}  // namespace corral::pool
