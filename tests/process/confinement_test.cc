// tests/process/confinement_test.cc: the confinement profile, observed from
// inside hostile commands (real kernel, /bin/sh scripts).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "corral/failure.hpp"
#include "process/confine.hpp"
#include "process/namespace_pool.hpp"
#include "process/test_util.hpp"

namespace corral::process {
namespace {

using testing::alive;
using testing::read_pids;
using testing::shell;
using testing::TempDir;

// A TempDir the mapped uid (65534) may enter and write.
std::string shared_dir(const TempDir& dir) {
  ::chmod(dir.path().c_str(), 0777);
  return dir.path();
}

// The test's own probe, independent of the product's: may a child of this
// process create a user namespace? The kernel refuses inside a chroot (the
// fresh-machine check runs the suite in one) and where a policy forbids it;
// there the confined profile runs without one, and says so in its report.
bool kernel_allows_user_namespaces() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(::unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Tests of what the unprivileged identity withholds skip where the kernel
// refuses a user namespace and the suite is not root; a root supervisor
// without one still drops the command to host uid 65534 with no
// capabilities, which these tests then check.
#define SKIP_WITHOUT_USER_NAMESPACES()                                          \
  if (!kernel_allows_user_namespaces() && ::geteuid() != 0)                     \
  GTEST_SKIP() << "no user namespace here and not root: the command keeps the " \
                  "supervisor's ids, and the confined profile reports it"

// A sleep only this test starts: `script` spells it so that no other
// command line (the script's own, a shell's) holds `marker`, which the
// sleep's does.
struct MarkedSleep {
  MarkedSleep() {
    static int count = 0;
    const long n = static_cast<long>(::getpid()) * 1000 + ++count;
    marker = "1000." + std::to_string(n);
    script = "sleep 1000.$((" + std::to_string(n - 1) + "+1))";
  }
  std::string marker;
  std::string script;
};

// Host pids of live processes whose command line holds `marker` (pids a
// command sees in its own pid namespace mean nothing out here).
std::vector<int> host_pids_holding(const std::string& marker) {
  std::vector<int> out;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    std::string cmdline;
    try {
      cmdline.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    } catch (const std::ios_base::failure&) {
      continue;  // it exited while we read (ESRCH): not holding anything
    }
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(marker) != std::string::npos && alive(std::stoi(name))) {
      out.push_back(std::stoi(name));
    }
  }
  return out;
}

// A confinement that also shows `dir` (read-write) at the same path.
Hardening binding(const std::string& dir) {
  Hardening hardening;
  hardening.confinement.binds.push_back(Bind{dir, "", true});
  return hardening;
}

int exit_code_of(Supervisor& supervisor, const Command& command) {
  try {
    return supervisor.run(command).exit_code().value_or(-1);
  } catch (const CommandError& e) {
    return e.execution()->exit_code().value_or(-1);
  }
}

// Every hostile case runs in each containment unit this host offers: the
// confined profile must hold whichever unit tracks the run.
class Confinement : public testing::EachUnit {
 protected:
  SupervisorOptions options() const { return unit_options(); }
};
using ConfinementFilesystem = Confinement;

TEST_P(Confinement, DeniesByDefault) {
  const Hardening hardening;
  EXPECT_TRUE(hardening.confinement.user_namespace);
  EXPECT_TRUE(hardening.confinement.seccomp);
  EXPECT_TRUE(hardening.confinement.pid_namespace);
  EXPECT_FALSE(hardening.confinement.network);
  EXPECT_EQ(hardening.confinement.filesystem, FilesystemView::minimal);
  ASSERT_TRUE(hardening.environment_allow.has_value());
  EXPECT_TRUE(hardening.environment_allow->empty());
}

TEST_P(Confinement, EnvironmentNeverCarriesCorralVariables) {
  ::setenv("CORRAL_AUTH_TOKEN", "secret-token", 1);
  ::setenv("CONFINEMENT_ALLOWED", "yes", 1);
  Supervisor supervisor(options());
  Command command{{"/usr/bin/env"}, {}};
  command.hardening.environment_allow =
      std::vector<std::string>{"CORRAL_AUTH_TOKEN", "CONFINEMENT_ALLOWED"};
  command.hardening.environment_set = {{"CORRAL_SET", "x"}, {"GREETING", "hi"}};
  EXPECT_EQ(supervisor.run(command).stdout_text(),
            "CONFINEMENT_ALLOWED=yes\nGREETING=hi\nPATH=/usr/local/bin:/usr/bin:/bin\n");

  Command inherited{{"/usr/bin/env"}, Hardening::host()};
  std::string out = supervisor.run(inherited).stdout_text();
  EXPECT_EQ(out.find("CORRAL_"), std::string::npos) << out;
  EXPECT_NE(out.find("CONFINEMENT_ALLOWED=yes"), std::string::npos);
  ::unsetenv("CORRAL_AUTH_TOKEN");
  ::unsetenv("CONFINEMENT_ALLOWED");
}

TEST_P(Confinement, MappedIdentityWithoutCapabilities) {
  SKIP_WITHOUT_USER_NAMESPACES();
  Supervisor supervisor(options());
  std::string out =
      supervisor
          .run(shell("id -u; id -g; id -G; grep -E '^(CapEff|CapPrm|CapBnd|CapAmb|NoNewPrivs)' "
                     "/proc/self/status; hostname"))
          .stdout_text();
  EXPECT_EQ(out,
            "65534\n65534\n65534\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\n"
            "CapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\nNoNewPrivs:\t1\ncorral\n");
}

TEST_P(Confinement, KillZeroStaysInsideTheCommandsSession) {
  Supervisor supervisor(options());
  for (const Hardening& hardening : {Hardening{}, Hardening::host()}) {
    Command command = shell("trap 'kill 0' EXIT; kill 0");
    command.hardening = hardening;
    exit_code_of(supervisor, command);
    // The test process is still here; the next run starts normally.
    EXPECT_EQ(supervisor.run(Command{{"/bin/echo", "next"}, hardening}).stdout_text(), "next\n");
  }
  SUCCEED();  // still alive: kill 0 hit only the command's own group
}

TEST_P(Confinement, NoControllingTerminal) {
  Supervisor supervisor(options());
  for (const Hardening& hardening : {Hardening{}, Hardening::host()}) {
    Command command = shell("(exec 3</dev/tty) 2>/dev/null && echo opened || echo refused");
    command.hardening = hardening;
    EXPECT_EQ(supervisor.run(command).stdout_text(), "refused\n");
  }
}

TEST_P(Confinement, EscapeSyscallsAreKilledBySigsys) {
  Supervisor supervisor(options());
  // ptrace (101), mount (165), unshare (272), setns (308), bpf (321),
  // keyctl (250), perf_event_open (298) on x86_64.
  for (const char* script :
       {"unshare -r true", "perl -e 'syscall(101, 0, 0, 0, 0)'",
        "perl -e 'syscall(165, 0, 0, 0, 0, 0)'", "perl -e 'syscall(308, 0, 0)'",
        "perl -e 'syscall(321, 0, 0, 0)'", "perl -e 'syscall(250, 0, 0)'",
        "perl -e 'syscall(298, 0, 0, 0, 0, 0)'"}) {
    EXPECT_EQ(exit_code_of(supervisor, shell(script)), 128 + SIGSYS) << script;
  }
  // An ordinary fork still works; so does a plain personality query.
  EXPECT_EQ(supervisor.run(shell("(true) && perl -e 'syscall(135, 0xffffffff)' && echo ok"))
                .stdout_text(),
            "ok\n");
}

TEST_P(Confinement, CgroupEscapeFails) {
  SKIP_WITHOUT_USER_NAMESPACES();
  Supervisor supervisor(options());
  std::string out =
      supervisor
          .run(shell("echo $$ > /sys/fs/cgroup/unified/cgroup.procs 2>/dev/null && echo moved; "
                     "echo $$ > /sys/fs/cgroup/pids/cgroup.procs 2>/dev/null && echo moved; "
                     "echo stayed"))
          .stdout_text();
  EXPECT_EQ(out, "stayed\n");
}

TEST_P(Confinement, KillingTheInitFromInsideChangesNothing) {
  Supervisor supervisor(options());
  Execution e = supervisor.run(shell("echo $PPID; kill -9 $PPID; kill -9 1; echo alive"));
  EXPECT_EQ(e.stdout_text(), "1\nalive\n");
  EXPECT_EQ(e.exit_code().value_or(-1), 0);
}

TEST_P(Confinement, ShadowAndRootAreUnreadable) {
  SKIP_WITHOUT_USER_NAMESPACES();
  Supervisor supervisor(options());
  std::string out = supervisor
                        .run(shell("cat /etc/shadow >/dev/null 2>&1 && echo shadow; "
                                   "ls /root >/dev/null 2>&1 && echo root; echo done"))
                        .stdout_text();
  EXPECT_EQ(out, "done\n");
}

TEST_P(Confinement, SetuidBinaryGainsNothing) {
  SKIP_WITHOUT_USER_NAMESPACES();
  TempDir dir;
  std::string path = shared_dir(dir) + "/id";
  std::filesystem::copy_file("/usr/bin/id", path);
  ASSERT_EQ(::chown(path.c_str(), 0, 0), 0);
  ASSERT_EQ(::chmod(path.c_str(), 04755), 0);
  Supervisor supervisor(options());
  EXPECT_EQ(supervisor.run(Command{{path, "-u"}, {}}).stdout_text(), "65534\n");
  // Even without the user namespace, no_new_privs (seccomp on) keeps euid.
  Hardening no_userns;
  no_userns.confinement.user_namespace = false;
  no_userns.confinement.uid = std::nullopt;
  no_userns.confinement.binds.push_back(Bind{dir.path(), "", false});
  Command as_nobody{
      {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", path, "-u"},
      no_userns};
  EXPECT_EQ(supervisor.run(as_nobody).stdout_text(), "65534\n");
}

TEST_P(Confinement, NoNetworkReachesAHostListener) {
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  socklen_t length = sizeof address;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  std::string port = std::to_string(ntohs(address.sin_port));
  std::string probe = "bash -c 'exec 3<>/dev/tcp/127.0.0.1/" + port +
                      "' 2>/dev/null && echo connected || echo refused";
  Supervisor supervisor(options());
  EXPECT_EQ(supervisor.run(shell(probe)).stdout_text(), "refused\n");
  EXPECT_EQ(supervisor.run(Command{{"/bin/sh", "-c", probe}, Hardening::host()}).stdout_text(),
            "connected\n");
  // Loopback inside is up (its own, empty).
  EXPECT_EQ(supervisor.run(shell("cat /sys/class/net/lo/operstate; ip -o link 2>/dev/null | wc -l"))
                .exit_code()
                .value_or(-1),
            0);
  ::close(listener);
}

// A network namespace is the costly part of a start, so runs take one from a
// pool (namespace_pool.hpp): a later run may get an earlier run's, once that
// run's pid namespace is empty, but two runs at once never share one.
TEST_P(Confinement, NetworkNamespacesAreReusedButNeverShared) {
  const ConfinementSupport& support = confinement_support();
  if (!support.network_namespace || !support.pid_namespace) {
    GTEST_SKIP() << "no network or pid namespace here: nothing is pooled";
  }
  SupervisorOptions two_at_once = options();
  two_at_once.slots = 2;
  Supervisor supervisor(two_at_once);
  auto output_of = [&](const Command& command) {
    try {
      return supervisor.run(command).stdout_text();
    } catch (const CommandError& e) {
      return "failed: " + std::string(e.what()) + ": " + e.execution()->stderr_text();
    }
  };
  const std::string first = output_of(shell("readlink /proc/self/ns/net"));
  const std::string again = output_of(shell("readlink /proc/self/ns/net"));
  ASSERT_EQ(first.rfind("net:[", 0), 0U) << first;
  EXPECT_EQ(again, first);
  EXPECT_GE(idle_network_namespaces(), 1U);

  // Two runs at once: each records its namespace, then waits for the other's.
  TempDir dir;
  shared_dir(dir);
  auto meeting = [&](const std::string& mine, const std::string& theirs) {
    Command command = shell("readlink /proc/self/ns/net > " + dir.path() + "/" + mine +
                            "; while [ ! -e " + dir.path() + "/" + theirs + " ]; do :; done");
    command.hardening = binding(dir.path());
    return command;
  };
  std::thread other([&] { output_of(meeting("b", "a")); });
  EXPECT_EQ(output_of(meeting("a", "b")), "");
  other.join();
  auto recorded = [&](const std::string& name) {
    std::ifstream in(dir.path() + "/" + name);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  EXPECT_EQ(recorded("a").rfind("net:[", 0), 0U);
  EXPECT_NE(recorded("a"), recorded("b"));
  // What a run could leave behind for the next: it holds no capability
  // over the namespace, so its settings stay as they were.
  const std::string tamper =
      "for f in ipv4/ping_group_range ipv4/ip_local_port_range; do "
      "echo '1 2' > /proc/sys/net/$f 2>/dev/null && echo changed $f; done; "
      "readlink /proc/self/ns/net";
  const std::string tampered_in = output_of(shell(tamper));
  EXPECT_TRUE(tampered_in == recorded("a") || tampered_in == recorded("b")) << tampered_in;
  // (what every new network namespace starts with)
  EXPECT_EQ(output_of(shell("cat /proc/sys/net/ipv4/ip_local_port_range")), "32768\t60999\n");
}

// The init is a copy of the supervisor's memory: never readable by the
// command, even one mapped to the supervisor's own uid (here root's 0).
TEST_P(Confinement, TheInitsMemoryIsNotReadable) {
  if (!confinement_support().pid_namespace) GTEST_SKIP() << "no pid namespace: no init";
  Supervisor supervisor(options());
  Command command = shell(
      "cat /proc/1/comm; for f in mem maps environ; do "
      "head -c1 /proc/1/$f >/dev/null 2>&1 && echo read $f; done; id -u");
  command.hardening.confinement.uid = ::geteuid();
  command.hardening.confinement.gid = ::getegid();
  EXPECT_EQ(supervisor.run(command).stdout_text(),
            "corral-init\n" + std::to_string(::geteuid()) + "\n");
}

TEST_P(Confinement, DescendantsDieWithTheRun) {
  MarkedSleep sleeper;
  Supervisor supervisor(options());
  // A double-forked, setsid'ed sleep and a plain background one; each
  // leaves a file in the private /tmp once started.
  std::string script = "setsid sh -c '(touch /tmp/a; exec " + sleeper.script +
                       ") &'; (touch /tmp/b; exec " + sleeper.script +
                       ") & while [ ! -e /tmp/a ] || [ ! -e /tmp/b ]; do :; done; echo started";
  EXPECT_EQ(supervisor.run(shell(script)).stdout_text(), "started\n");
  EXPECT_EQ(host_pids_holding(sleeper.marker), std::vector<int>{});
}

TEST_P(Confinement, SupervisorCrashKillsTheTree) {
  TempDir dir;
  shared_dir(dir);
  MarkedSleep sleeper;
  testing::ReadyFifo ready(dir);
  ::chmod(ready.path().c_str(), 0666);
  pid_t helper = ::fork();
  ASSERT_GE(helper, 0);
  if (helper == 0) {
    Supervisor supervisor(options());
    try {
      Command command =
          shell("(touch /tmp/a; exec " + sleeper.script +
                ") & while [ ! -e /tmp/a ]; do :; done; echo up > " + ready.path() + "; wait");
      command.hardening = binding(dir.path());
      supervisor.run(command);
    } catch (...) {
    }
    ::_exit(0);
  }
  ASSERT_TRUE(ready.wait());
  // touch has run; the exec of sleep may still be ahead.
  std::vector<int> recorded;
  ASSERT_TRUE(testing::eventually([&] {
    recorded = host_pids_holding(sleeper.marker);
    return recorded.size() == 1;
  }));
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, recorded[0], 0));
  ASSERT_GE(pidfd, 0);
  ::kill(helper, SIGKILL);
  int status = 0;
  ::waitpid(helper, &status, 0);
  pollfd p{pidfd, POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 10000), 1);
  ::close(pidfd);
  EXPECT_FALSE(alive(recorded[0]));
}

TEST_P(Confinement, HostProfileStillRuns) {
  Supervisor supervisor(options());
  EXPECT_EQ(supervisor.run(Command{{"/bin/sh", "-c", "id -u"}, Hardening::host()}).stdout_text(),
            std::to_string(::geteuid()) + "\n");
}

TEST_P(Confinement, ProtectionsAreReported) {
  auto protections = confinement_protections(Hardening{});
  auto find = [&](const std::string& name) -> const Protection* {
    for (const auto& p : protections) {
      if (p.name == name) return &p;
    }
    return nullptr;
  };
  for (const char* name : {"session", "environment", "user_namespace", "seccomp", "pid_namespace",
                           "network", "filesystem"}) {
    ASSERT_NE(find(name), nullptr) << name;
  }
  EXPECT_EQ(find("user_namespace")->enforced, kernel_allows_user_namespaces())
      << find("user_namespace")->detail;
  EXPECT_TRUE(find("seccomp")->enforced) << find("seccomp")->detail;
  EXPECT_TRUE(find("pid_namespace")->enforced);
  // As root a mount namespace is always possible; else only in a user one.
  EXPECT_EQ(find("filesystem")->enforced, ::geteuid() == 0 || kernel_allows_user_namespaces())
      << find("filesystem")->detail;
  bool all_enforced = true;
  for (const auto& p : protections) all_enforced = all_enforced && p.enforced;
  Hardening strict;
  strict.confinement.strict = true;
  Supervisor supervisor(options());
  Command command = shell("echo strict");
  command.hardening = strict;
  if (all_enforced) {
    EXPECT_EQ(supervisor.run(command).stdout_text(), "strict\n");
  } else {
    EXPECT_THROW(supervisor.run(command), SetupError);
  }
}

// ---- the filesystem view ---------------------------------------------------

TEST_P(ConfinementFilesystem, MinimalViewShowsOnlyTheSystemDirectories) {
  Supervisor supervisor(options());
  std::string out =
      supervisor
          .run(shell(
              "for p in /usr/bin/env /etc/passwd /home /root /var /opt /work /srv /sys "
              "/boot; do [ -e $p ] && echo \"has $p\"; done; ls /dev | tr '\\n' ' '; echo; "
              "ls -A /tmp | wc -l; pwd; cat /proc/1/comm; echo $$; ls /proc | grep -c '^[0-9]'"))
          .stdout_text();
  const auto last = out.rfind('\n', out.size() - 2) + 1;
  EXPECT_EQ(out.substr(0, last),
            "has /usr/bin/env\nhas /etc/passwd\n"
            "fd full null random shm stderr stdin stdout urandom zero \n0\n/\ncorral-init\n2\n")
      << out;
  // Its own processes only: the init, this shell, ls and perhaps grep.
  EXPECT_LE(std::stoi(out.substr(last)), 4) << out;
}

TEST_P(ConfinementFilesystem, NothingOutsideTheWritableBindsCanBeWritten) {
  TempDir writable, readable;
  shared_dir(writable);
  shared_dir(readable);
  std::ofstream(readable.path() + "/input") << "from the host\n";
  Hardening hardening;
  hardening.confinement.binds = {Bind{writable.path(), "", true},
                                 Bind{readable.path(), "/data", false}};
  Supervisor supervisor(options());
  Command command =
      shell("cat /data/input; echo out > " + writable.path() +
            "/result && echo wrote; "
            "for p in /data/x /usr/x /etc/x /x /dev/x; do (echo > $p) 2>/dev/null && echo \"wrote "
            "$p\"; done; [ -e " +
            readable.path() + " ] && echo 'source visible'; echo done");
  command.hardening = hardening;
  EXPECT_EQ(supervisor.run(command).stdout_text(), "from the host\nwrote\ndone\n");
  std::ifstream result(writable.path() + "/result");
  std::string line;
  std::getline(result, line);
  EXPECT_EQ(line, "out");
  EXPECT_FALSE(std::filesystem::exists(readable.path() + "/x"));
}

TEST_P(ConfinementFilesystem, HostReadOnlyViewReadsButNeverWrites) {
  TempDir dir;
  shared_dir(dir);
  std::ofstream(dir.path() + "/host-file") << "kept\n";
  const std::string host_tmp_file = "/tmp/corral-host-" + std::to_string(::getpid());
  std::ofstream(host_tmp_file) << "host\n";
  Hardening hardening;
  hardening.confinement.filesystem = FilesystemView::host_read_only;
  hardening.working_directory = dir.path();
  Supervisor supervisor(options());
  Command command = shell(
      "cat host-file; (echo no > host-file) 2>/dev/null && echo overwrote; "
      "(echo no > /usr/x) 2>/dev/null && echo wrote; [ -e /etc/passwd ] && echo etc; "
      "[ -e " +
      host_tmp_file +
      " ] || echo 'host /tmp hidden'; echo private > /tmp/t && cat /tmp/t; "
      "cat /proc/1/comm");
  command.hardening = hardening;
  EXPECT_EQ(supervisor.run(command).stdout_text(),
            "kept\netc\nhost /tmp hidden\nprivate\ncorral-init\n");
  std::filesystem::remove(host_tmp_file);
  EXPECT_FALSE(std::filesystem::exists("/tmp/t"));
  std::ifstream kept(dir.path() + "/host-file");
  std::string line;
  std::getline(kept, line);
  EXPECT_EQ(line, "kept");
}

TEST_P(ConfinementFilesystem, PrivateTmpIsBoundedAndGoneAfterTheRun) {
  Supervisor supervisor(options());
  Hardening hardening;
  hardening.confinement.limits.memory_bytes = std::uint64_t{64} << 20;
  Command fill = shell(
      "dd if=/dev/zero of=/tmp/fill bs=1M count=100 2>&1 | grep -c 'No space left'; "
      "rm /tmp/fill; echo left > /tmp/left");
  fill.hardening = hardening;
  EXPECT_EQ(supervisor.run(fill).stdout_text(), "1\n");
  // The next run's /tmp is a new, empty one.
  EXPECT_EQ(supervisor.run(shell("ls -A /tmp | wc -l")).stdout_text(), "0\n");
}

TEST_P(ConfinementFilesystem, ABadBindIsRefusedBeforeAnythingStarts) {
  Supervisor supervisor(options());
  for (const Bind& bad : {Bind{"/nonexistent/corral-bind", "", false},
                          Bind{"relative/path", "", false}, Bind{"/proc/self", "", false},
                          Bind{"/etc/passwd", "/", false}, Bind{"/dev/null", "", false}}) {
    Hardening hardening;
    hardening.confinement.binds = {bad};
    Command command = shell("echo started");
    command.hardening = hardening;
    EXPECT_THROW(supervisor.run(command), SetupError) << bad.source;
  }
  Hardening too_many;
  too_many.confinement.binds.assign(kMaxBinds + 1, Bind{"/usr", "", false});
  Command many = shell("echo started");
  many.hardening = too_many;
  EXPECT_THROW(supervisor.run(many), SetupError);
  EXPECT_EQ(supervisor.run(shell("echo next")).stdout_text(), "next\n");
}

// The host after many views, failed ones among them: no descriptor and no
// mount of the supervisor's namespace left behind.
TEST_P(ConfinementFilesystem, ManyViewsLeaveTheHostAsItWas) {
  auto count_lines = [](const char* path) {
    std::ifstream in(path);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) ++n;
    return n;
  };
  auto open_fds = [] {
    int n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
    return n;
  };
  Supervisor supervisor(options());
  EXPECT_EQ(supervisor.run(shell("true")).exit_code().value_or(-1), 0);  // probes done
  const int fds = open_fds();
  const int mounts = count_lines("/proc/self/mountinfo");
  Hardening unbindable;
  unbindable.confinement.binds = {Bind{"/nonexistent/corral-bind", "", false}};
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(supervisor.run(shell("echo x > /tmp/x")).exit_code().value_or(-1), 0);
    Command refused = shell("true");
    refused.hardening = unbindable;
    EXPECT_THROW(supervisor.run(refused), SetupError);
  }
  EXPECT_LE(open_fds(), fds);  // a cached leaf may have closed since
  EXPECT_EQ(count_lines("/proc/self/mountinfo"), mounts);
  EXPECT_EQ(supervisor.run(shell("echo next")).stdout_text(), "next\n");
}

TEST_P(ConfinementFilesystem, AnExecutableOutsideTheSystemDirectoriesIsShown) {
  TempDir dir;
  shared_dir(dir);
  const std::string tool = dir.path() + "/tool.sh";
  std::ofstream(tool) << "#!/bin/sh\necho \"tool in $(pwd)\"\n";
  ::chmod(tool.c_str(), 0755);
  Supervisor supervisor(options());
  EXPECT_EQ(supervisor.run(Command{{tool}, {}}).stdout_text(), "tool in /\n");
  Hardening in_dir;
  in_dir.working_directory = dir.path();
  EXPECT_EQ(supervisor.run(Command{{"./tool.sh"}, in_dir}).stdout_text(),
            "tool in " + dir.path() + "\n");
}

TEST_P(ConfinementFilesystem, RootWithoutAUserNamespaceRunsAsTheGivenHostIds) {
  if (::geteuid() != 0) GTEST_SKIP() << "only a root supervisor drops to 65534 on the host";
  Hardening hardening;
  hardening.confinement.user_namespace = false;
  hardening.confinement.uid = 65534;
  hardening.confinement.gid = 65534;
  Supervisor supervisor(options());
  Command command = shell(
      "id -u; id -g; grep -E '^(CapEff|CapBnd)' /proc/self/status; "
      "cat /etc/shadow >/dev/null 2>&1 && echo shadow; echo $$ > /sys/fs/cgroup/pids/cgroup.procs "
      "2>/dev/null && echo moved; echo done");
  command.hardening = hardening;
  EXPECT_EQ(supervisor.run(command).stdout_text(),
            "65534\n65534\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\ndone\n");
}

INSTANTIATE_TEST_SUITE_P(EveryUnit, Confinement, testing::every_unit_kind(), testing::unit_name);
INSTANTIATE_TEST_SUITE_P(EveryUnit, ConfinementFilesystem, testing::every_unit_kind(),
                         testing::unit_name);

}  // namespace
}  // namespace corral::process
