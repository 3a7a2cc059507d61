// tests/daemon/daemon_test.cc: `corral serve`, `check`, `status` and
// `maintenance` as an operator meets them: the real binary as a subprocess,
// real sockets, real signals.
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <yaml-cpp/yaml.h>
#include "corral/client.hpp"
#include "daemon/admin.hpp"
#include "gtest/gtest.h"
#include "process/orphans.hpp"

extern char** environ;

namespace {

using namespace std::chrono_literals;
using corral::client::admin_request;
using corral::process::children_of;
using corral::process::process_state;

// A child process with its stdout and stderr on pipes.
class Process {
 public:
  Process(std::vector<std::string> args, std::vector<std::string> extra_env = {}) {
    int out[2], err[2];
    EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(err, O_CLOEXEC), 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err[1], 2);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);
    for (auto& e : extra_env) env_strings.push_back(e);
    std::vector<char*> envp;
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    EXPECT_EQ(::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), envp.data()), 0);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    ::close(err[1]);
    out_ = out[0];
    err_ = err[0];
  }
  ~Process() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(out_);
    ::close(err_);
  }

  // Reads stdout until a line matching `pattern` arrives (or `bound`).
  std::string wait_for_line(const std::string& pattern, std::chrono::milliseconds bound = 30s) {
    const std::regex re(pattern);
    const auto deadline = std::chrono::steady_clock::now() + bound;
    while (std::chrono::steady_clock::now() < deadline) {
      std::size_t nl;
      while ((nl = out_buffer_.find('\n')) != std::string::npos) {
        std::string line = out_buffer_.substr(0, nl);
        out_buffer_.erase(0, nl + 1);
        if (std::regex_search(line, re)) return line;
      }
      pollfd p{out_, POLLIN, 0};
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (::poll(&p, 1, static_cast<int>(std::max<long>(1, left.count()))) <= 0) break;
      char buffer[4096];
      const ssize_t n = ::read(out_, buffer, sizeof buffer);
      if (n <= 0) break;
      out_buffer_.append(buffer, static_cast<std::size_t>(n));
    }
    return {};
  }

  // Waits for the exit (bounded); returns the exit code, or -1.
  int wait(std::chrono::milliseconds bound = 30s) {
    const auto deadline = std::chrono::steady_clock::now() + bound;
    while (true) {
      int status = 0;
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        reaped_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      if (std::chrono::steady_clock::now() > deadline) return -1;
      // A child's exit has no fd to poll here; its stderr closing is one.
      pollfd p{err_, POLLIN, 0};
      if (::poll(&p, 1, 20) > 0) drain_stderr();
    }
  }

  std::string stdout_rest() {
    std::string all = out_buffer_;
    char buffer[4096];
    ssize_t n;
    ::fcntl(out_, F_SETFL, O_NONBLOCK);
    while ((n = ::read(out_, buffer, sizeof buffer)) > 0) all.append(buffer, n);
    return all;
  }
  std::string stderr_text() {
    drain_stderr();
    return err_buffer_;
  }
  void signal(int sig) { ::kill(pid_, sig); }
  pid_t pid() const { return pid_; }
  // Reads stderr until it holds `needle` (or `bound`); returns whether it does.
  bool wait_for_stderr(const std::string& needle, std::chrono::milliseconds bound = 30s) {
    const auto deadline = std::chrono::steady_clock::now() + bound;
    while (true) {
      drain_stderr();
      if (err_buffer_.find(needle) != std::string::npos) return true;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{err_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    }
  }

 private:
  void drain_stderr() {
    char buffer[4096];
    ::fcntl(err_, F_SETFL, O_NONBLOCK);
    ssize_t n;
    while ((n = ::read(err_, buffer, sizeof buffer)) > 0) err_buffer_.append(buffer, n);
  }

  pid_t pid_ = -1;
  int out_ = -1, err_ = -1;
  bool reaped_ = false;
  std::string out_buffer_, err_buffer_;
};

const std::string kCorral = CORRAL_BINARY;

// A daemon on free ports; knows its executor and admin addresses.
struct Daemon {
  // `prefix` runs the daemon under another program (`unshare ...`).
  explicit Daemon(std::vector<std::string> flags, std::vector<std::string> env = {},
                  std::vector<std::string> prefix = {})
      : process(
            [&] {
              std::vector<std::string> args = prefix;
              for (const char* a : {"serve", "--port", "0", "--admin-port", "0"}) {
                if (a == std::string_view("serve")) args.push_back(kCorral);
                args.push_back(a);
              }
              args.insert(args.end(), flags.begin(), flags.end());
              return args;
            }(),
            env) {
    const std::string executor = process.wait_for_line("executor on ws://");
    const std::string admin_line = process.wait_for_line("admin on http://");
    std::smatch m;
    if (std::regex_search(executor, m, std::regex("ws://127\\.0\\.0\\.1:([0-9]+)/")))
      port = static_cast<std::uint16_t>(std::stoi(m[1]));
    if (std::regex_search(admin_line, m, std::regex("http://127\\.0\\.0\\.1:([0-9]+)/")))
      admin_port = static_cast<std::uint16_t>(std::stoi(m[1]));
  }
  std::string url() const { return "ws://127.0.0.1:" + std::to_string(port) + "/"; }
  corral::daemon::AdminResponse get(std::string_view path) {
    return admin_request("127.0.0.1", port, "GET", path);
  }
  corral::daemon::AdminResponse admin(std::string_view method, std::string_view path) {
    return admin_request("127.0.0.1", admin_port, method, path);
  }

  Process process;
  std::uint16_t port = 0;
  std::uint16_t admin_port = 0;
};

corral::client::ExecuteRequest request(std::string code) {
  corral::client::ExecuteRequest r;
  r.code = std::move(code);
  return r;
}

// A loopback port someone else is listening on, for as long as it lives.
class TakenPort {
 public:
  TakenPort() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd_, 1), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~TakenPort() { ::close(fd_); }
  std::string port() const { return std::to_string(port_); }

 private:
  int fd_;
  std::uint16_t port_ = 0;
};

TEST(Serve, StartsOnPrintedAddressesAndAnswersProbesAndRuns) {
  Daemon d({});
  ASSERT_NE(d.port, 0);
  ASSERT_NE(d.admin_port, 0);
  EXPECT_EQ(d.get("/healthz").status, 200);
  EXPECT_EQ(d.get("/readyz").status, 200);
  auto client = corral::client::Client::connect(d.url());
  auto outcome = client->execute(request("async () => 6 * 7"));
  ASSERT_TRUE(outcome.ok()) << outcome.failure().message;
  EXPECT_EQ(outcome.execution().value(), "42");
  client->close();
  d.process.signal(SIGTERM);
  EXPECT_EQ(d.process.wait(), 0) << d.process.stderr_text();
}

TEST(Serve, AnswersEveryPathTheManifestsAndTheImagePoll) {
  const std::string deploy = std::string(CORRAL_SOURCE_DIR) + "/deploy/";
  YAML::Node pod = YAML::LoadFile(deploy + "kubernetes/base/deployment.yaml")["spec"]["template"];
  YAML::Node container = pod["spec"]["containers"][0];
  std::vector<std::string> env;
  for (const auto& e : container["env"]) {
    const std::string name = e["name"].as<std::string>();
    if (!e["value"] || name == "CORRAL_PORT" || name == "CORRAL_HOST") continue;
    env.push_back(name + "=" + e["value"].as<std::string>());
  }
  std::vector<std::string> paths = {
      container["readinessProbe"]["httpGet"]["path"].as<std::string>(),
      container["livenessProbe"]["httpGet"]["path"].as<std::string>(),
      pod["metadata"]["annotations"]["prometheus.io/path"].as<std::string>(),
  };
  std::ifstream dockerfile(deploy + "Dockerfile");
  const std::string text((std::istreambuf_iterator<char>(dockerfile)), {});
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex("CORRAL_PORT\\}(/[a-z]+)")));
  paths.push_back(m[1]);
  Daemon d({}, env);
  for (const std::string& path : paths) EXPECT_EQ(d.get(path).status, 200) << path;
}

// Kills the pid-namespace reaper of a live worker three times over: each
// time the worker it held (pid 1 of its own namespace) re-parents to the
// daemon, as a child subreaper or as PID 1 of a container, and must be
// reaped, not left a zombie; the pool replaces the worker and the next run
// succeeds. `daemon_pid` is the daemon's own pid as this test sees it.
void expect_orphaned_workers_reaped(Daemon& d, pid_t daemon_pid) {
  auto client = corral::client::Client::connect(d.url());
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    ASSERT_TRUE(client->execute(request("async () => 1")).ok());
    pid_t reaper = 0, worker = 0;
    for (pid_t child : children_of(daemon_pid)) {
      const std::vector<pid_t> inner = children_of(child);
      if (inner.size() == 1) {
        reaper = child;
        worker = inner[0];
        break;
      }
    }
    if (!reaper) GTEST_SKIP() << "workers run without a pid namespace here";
    ASSERT_EQ(::kill(reaper, SIGKILL), 0);
    // A zombie has no event to await from outside its parent: bounded poll.
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!process_state(worker).empty() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(10ms);
    }
    EXPECT_EQ(process_state(worker), "") << "worker " << worker << " was never reaped";
    auto next = client->execute(request("async () => 6 * 7"));
    ASSERT_TRUE(next.ok()) << next.failure().message;
    EXPECT_EQ(next.execution().value(), "42");
  }
  for (pid_t child : children_of(daemon_pid)) EXPECT_NE(process_state(child), "Z") << child;
  client->close();
}

// As a child subreaper the daemon inherits them; without it they went to the
// host's init, which reaps too, so only the PID 1 case below fails without
// the daemon's reaper (measured: 3 zombies of 3).
TEST(Serve, ReapsTheWorkersItInheritsWhenTheirReaperIsKilled) {
  Daemon d({"--max-workers", "1"});
  expect_orphaned_workers_reaped(d, d.process.pid());
  d.process.signal(SIGTERM);
  EXPECT_EQ(d.process.wait(), 0) << d.process.stderr_text();
}

// The image's case: the daemon is PID 1 of its pid namespace (no init).
TEST(Serve, ReapsEveryOrphanAsPidOneOfAPidNamespace) {
  if (::geteuid() != 0 || ::access("/usr/bin/unshare", X_OK) != 0)
    GTEST_SKIP() << "needs root and unshare(1) for a pid namespace";
  // In a chroot "/" is no mount point, and unshare cannot make the new /proc
  // private ("cannot change root filesystem propagation").
  if (std::system("/usr/bin/unshare --pid --fork --mount-proc /bin/true 2>/dev/null") != 0)
    GTEST_SKIP() << "unshare --pid --fork --mount-proc does not work here";
  Daemon d({"--max-workers", "1"}, {},
           {"/usr/bin/unshare", "--pid", "--fork", "--kill-child", "--mount-proc"});
  ASSERT_NE(d.port, 0) << d.process.stderr_text();
  const std::vector<pid_t> daemon = children_of(d.process.pid());  // unshare's one child
  ASSERT_EQ(daemon.size(), 1u);
  std::ifstream status("/proc/" + std::to_string(daemon[0]) + "/status");
  std::string line, nspid;
  while (std::getline(status, line))
    if (line.rfind("NSpid:", 0) == 0) nspid = line;
  EXPECT_TRUE(nspid.ends_with("\t1")) << "not PID 1 in its namespace: " << nspid;
  expect_orphaned_workers_reaped(d, daemon[0]);
  ::kill(daemon[0], SIGTERM);  // unshare forwards no signal; it exits with its child
  EXPECT_EQ(d.process.wait(), 0) << d.process.stderr_text();
}

std::uint64_t status_kib(pid_t pid, const std::string& key) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(key + ":", 0) == 0) return std::stoull(line.substr(key.size() + 1));
  }
  return 0;
}

std::size_t open_fds(pid_t pid) {
  std::size_t n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

// Ten runs that grow a worker past any limit if nothing stops them (the
// pool's memory watch and the worker's kernel ceiling do; tests/pool/
// memory_test.cc), sent to the daemon over its executor protocol: each ends
// as memory_limit, /healthz answers after it, the next run succeeds, and
// the daemon itself (results travel through it) neither grows nor leaks
// descriptors.
TEST(Serve, HostileRunsEndAsMemoryLimitAndTheDaemonStaysSmall) {
  Daemon d({"--max-workers", "1", "--memory-limit", "32MiB"});
  auto client = corral::client::Client::connect(d.url());
  ASSERT_TRUE(client->execute(request("async () => 1")).ok());
  const std::uint64_t peak_before = status_kib(d.process.pid(), "VmHWM");
  const std::size_t fds_before = open_fds(d.process.pid());
  const char* cases[] = {
      "async () => 'x'.repeat((1 << 29) - 24)",
      "async () => { const s = 'x'.repeat((1 << 29) - 24); return s.charCodeAt(7); }",
      "async () => Array.from({length: 2 ** 32 - 1})",
      "async () => [...new Intl.Segmenter('en', {granularity: 'word'}).segment('ab '.repeat(2e4))]",
      "async () => { const keep = []; "
      "for (;;) keep.push(new Intl.Segmenter('en').segment('x'.repeat(1e5))); }",
      "async () => { console.log('x'.repeat((1 << 29) - 24)); return 1; }",
      "async () => new Array(2 ** 26).fill('ab').join('')",
      "async () => Object.fromEntries(Array.from({length: 1e7}, (_, i) => [i, i]))",
      "async () => [...'a'.repeat(1e7).matchAll(/a/g)].length",
      "async () => { const m = new Map(); for (let i = 0; ; i++) m.set(i, 'v' + i); }",
  };
  for (const char* code : cases) {
    SCOPED_TRACE(code);
    corral::client::ExecuteRequest hostile = request(code);
    hostile.timeout = corral::client::Timeout::of(20s);
    auto outcome = client->execute(hostile);
    ASSERT_FALSE(outcome.ok()) << outcome.execution().value().substr(0, 80);
    EXPECT_EQ(outcome.failure().code, corral::FailureCode::memory_limit)
        << outcome.failure().message;
    EXPECT_FALSE(outcome.failure().retryable());
    EXPECT_EQ(d.get("/healthz").status, 200);
    auto next = client->execute(request("async () => [1, 2].join('+')"));
    ASSERT_TRUE(next.ok()) << next.failure().message;
    EXPECT_EQ(next.execution().value(), "\"1+2\"");
  }
  const std::uint64_t peak_after = status_kib(d.process.pid(), "VmHWM");
  EXPECT_LT(peak_after - peak_before, 64u * 1024)
      << "the daemon's peak RSS grew by " << (peak_after - peak_before) / 1024 << " MiB";
  EXPECT_LE(open_fds(d.process.pid()), fds_before + 2);
  client->close();
  d.process.signal(SIGTERM);
  EXPECT_EQ(d.process.wait(), 0) << d.process.stderr_text();
}

TEST(Serve, RefusedSettingsAreAllReportedAndExitOne) {
  Process p({kCorral, "serve", "--max-queue", "0", "--retire-after", "0"},
            {"CORRAL_MAX_WORKERS=0", "CORRAL_SHUTDOWN_DELAY=1m", "CORRAL_SHUTDOWN_GRACE=30s"});
  EXPECT_EQ(p.wait(), 1);
  const std::string err = p.stderr_text();
  EXPECT_NE(err.find("--max-workers or CORRAL_MAX_WORKERS: must be at least 1"), std::string::npos)
      << err;
  EXPECT_NE(err.find("--max-queue or CORRAL_MAX_QUEUE: must be at least 1"), std::string::npos);
  EXPECT_NE(err.find("--retire-after or CORRAL_RETIRE_AFTER: must be at least 1"),
            std::string::npos);
  EXPECT_NE(err.find("--shutdown-delay or CORRAL_SHUTDOWN_DELAY: must be smaller than"),
            std::string::npos);
}

TEST(Serve, AddressInUseExitsTwo) {
  TakenPort taken;
  Process p({kCorral, "serve", "--port", taken.port(), "--admin-port", "0"});
  EXPECT_EQ(p.wait(), 2) << p.stderr_text();
}

TEST(Serve, ATakenAdminPortReleasesTheExecutorAndExitsTwo) {
  TakenPort taken;
  Process p(
      {kCorral, "serve", "--port", "0", "--admin-port", taken.port(), "--log-level", "debug"});
  EXPECT_EQ(p.wait(), 2);
  const std::string err = p.stderr_text();
  EXPECT_NE(err.find("cannot start"), std::string::npos) << err;
  EXPECT_EQ(err.find("executor listening"), std::string::npos)
      << "the start must not report success";
}

// With MCP on, the service (and its upstream server) started before the
// listen: a taken port releases them in the start itself, so nothing is
// "stopped" that never ran.
TEST(Serve, ATakenPortReleasesTheMcpServiceAndExitsTwo) {
  TakenPort taken;
  const std::string src = CORRAL_SOURCE_DIR;
  const std::string upstream = R"({"probe": {"command": ["/bin/sh", ")" + src +
                               R"(/tests/mcp/fixtures/env_upstream.sh"],)"
                               R"( "confinement": {"binds": [")" +
                               src + R"(/tests/mcp/fixtures"]}}})";
  Process p({kCorral, "serve", "--port", taken.port(), "--admin-port", "0", "--log-level", "debug",
             "--mcp-manifest", src + "/tests/mcp/fixtures/mcp_tools.yaml", "--mcp-upstream",
             upstream});
  EXPECT_EQ(p.wait(), 2);
  const std::string err = p.stderr_text();
  EXPECT_NE(err.find("cannot start"), std::string::npos) << err;
  EXPECT_EQ(err.find("stopping:"), std::string::npos) << err;
  EXPECT_EQ(err.find("executor listening"), std::string::npos) << err;
}

TEST(AdminListener, AHandlerThatThrowsAnswersJson500WithoutDetails) {
  std::string logged;
  corral::daemon::AdminListener listener(
      "127.0.0.1", 0,
      [](std::string_view, std::string_view) -> corral::daemon::AdminResponse {
        throw std::runtime_error("secret internal detail");
      },
      [&](const std::string& message) { logged = message; });
  listener.listen();
  const auto response = admin_request("127.0.0.1", listener.port(), "GET", "/__status__");
  listener.close();
  EXPECT_EQ(response.status, 500);
  EXPECT_EQ(response.body, "{\"error\":\"Internal error.\"}\n");
  EXPECT_NE(logged.find("secret internal detail"), std::string::npos) << "the log has the detail";
}

TEST(AdminListener, AnIpv6AdminHostIsReachedWithABracketedHost) {
  corral::daemon::AdminListener listener(
      "::1", 0,
      [](std::string_view, std::string_view) -> corral::daemon::AdminResponse {
        return {200, "{}"};
      },
      nullptr);
  try {
    listener.listen();
  } catch (const std::system_error& e) {
    GTEST_SKIP() << "no IPv6 loopback here: " << e.what();
  }
  EXPECT_EQ(admin_request("::1", listener.port(), "GET", "/__status__").status, 200);
  listener.close();
}

TEST(Check, RunsTheWholePathToFortyTwo) {
  Process p({kCorral, "check"});
  EXPECT_EQ(p.wait(60s), 0) << p.stderr_text();
  const std::string out = p.stdout_rest();
  EXPECT_NE(out.find("check: ok: a hardened worker returned 42"), std::string::npos) << out;
  EXPECT_NE(out.find("Every setting is at its default."), std::string::npos);
  EXPECT_NE(out.find("seccomp allow-list     active"), std::string::npos);
  // The bound commands' default profile, each protection with its state.
  EXPECT_NE(out.find("Bound commands' default (confined) profile on this machine:\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("\n  seccomp                active: "), std::string::npos) << out;
  EXPECT_NE(out.find("\n  filesystem             "), std::string::npos) << out;
  EXPECT_NE(out.find("\n  limits.processes       "), std::string::npos) << out;
}

TEST(Check, PrintsWhereEachNonDefaultSettingCameFrom) {
  Process p({kCorral, "check", "--json", "--max-workers", "1"},
            {"CORRAL_MAX_QUEUE=42", "CORRAL_MAX_WORKERS=3"});
  EXPECT_EQ(p.wait(60s), 0);
  const auto o = boost::json::parse(p.stdout_rest()).as_object();
  EXPECT_TRUE(o.at("ok").as_bool());
  EXPECT_EQ(o.at("value").as_string(), "42");
  const auto& lines = o.at("settings").as_array();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].as_string(), "--max-workers is 1, from the flag.");
  EXPECT_EQ(lines[1].as_string(), "--max-queue is 42, from the environment.");
  bool saw_filesystem = false;
  for (const auto& p : o.at("command_protections").as_array()) {
    EXPECT_TRUE(p.at("enforced").is_bool());
    saw_filesystem = saw_filesystem || p.at("name").as_string() == "filesystem";
  }
  EXPECT_TRUE(saw_filesystem);
}

TEST(Check, ExitsFiveWhenTheMachineCannotRunSandboxedCode) {
  // A worker program that cannot start stands for a machine that cannot
  // run a sandbox (no V8, refused lockdown, ...).
  Process p({kCorral, "check", "--worker", "/bin/false"});
  EXPECT_EQ(p.wait(60s), 5);
  const std::string out = p.stdout_rest();
  EXPECT_NE(out.find("check: FAILED: unavailable"), std::string::npos) << out;
  EXPECT_NE(out.find("--worker is /bin/false, from the flag."), std::string::npos) << out;
}

TEST(Admin, StatusConfigAndUnknownRoutes) {
  Daemon d({"--auth-token", "s3cret"});
  auto status = d.admin("GET", "/__status__");
  EXPECT_EQ(status.status, 200);
  const auto o = boost::json::parse(status.body).as_object();
  EXPECT_TRUE(o.at("accepting").as_bool());
  EXPECT_TRUE(o.at("protections").as_object().at("seccomp").as_bool());
  EXPECT_TRUE(o.contains("workers"));
  EXPECT_TRUE(o.contains("uptime_seconds"));

  auto config = d.admin("GET", "/__config__");
  EXPECT_EQ(config.status, 200);
  EXPECT_EQ(config.body.find("s3cret"), std::string::npos) << "secrets are redacted";
  const std::string token_line =
      R"J({"flag":"--auth-token","env":"CORRAL_AUTH_TOKEN","value":"(redacted)","source":"flag"})J";
  EXPECT_NE(config.body.find(token_line), std::string::npos) << config.body;

  auto missing = d.admin("GET", "/nope");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.body, "{\"error\":\"No such route.\"}\n");
  EXPECT_EQ(d.admin("POST", "/__status__").status, 405);
  // The admin listener is not the executor: probes are not served there.
  EXPECT_EQ(d.admin("GET", "/healthz").status, 404);
}

// One raw HTTP exchange on a fresh loopback connection: `head` (request
// line and header lines) goes out as written; returns the status and the
// whole answer. An accepted upgrade is read up to its blank line.
std::pair<int, std::string> raw_http(std::uint16_t port, const std::string& head) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  timeval tv{20, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const std::string out = head + "\r\n";
  EXPECT_EQ(::write(fd, out.data(), out.size()), static_cast<ssize_t>(out.size()));
  std::string text;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0) {
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.rfind("HTTP/1.1 101", 0) == 0 && text.find("\r\n\r\n") != std::string::npos) break;
  }
  ::close(fd);
  return {text.size() > 12 ? std::stoi(text.substr(9, 3)) : 0, text};
}

TEST(Admin, ARebindingPageCannotTakeTheReplicaOutOfService) {
  Daemon d({"--allowed-origins", "https://console.example"});
  const std::string admin = std::to_string(d.admin_port);
  struct Case {
    std::string head;
    int status;
  };
  const std::vector<Case> cases = {
      {"PUT /__maintenance__ HTTP/1.1\r\nHost: attacker.example:" + admin + "\r\n", 403},
      {"PUT /__maintenance__ HTTP/1.1\r\nHost: 127.0.0.1.attacker.example\r\n", 403},
      {"PUT /__maintenance__ HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://attacker.example\r\n",
       403},
      {"PUT /__maintenance__ HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: null\r\n", 403},
      {"PUT /__maintenance__ HTTP/1.1\r\nHost: 127.1\r\n", 400},
      {"PUT /__maintenance__ HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: 127.0.0.1\r\n", 400},
      {"PUT /__maintenance__ HTTP/1.1\r\n", 400},
      {"GET /__config__ HTTP/1.1\r\nHost: attacker.example\r\n", 403},
  };
  for (const Case& c : cases) {
    const auto [status, text] = raw_http(d.admin_port, c.head);
    EXPECT_EQ(status, c.status) << c.head << "\n" << text;
    EXPECT_NE(text.find(R"({"error":")"), std::string::npos) << text;
    // Still in service: accepting, ready, healthy, running code.
    const auto state = boost::json::parse(d.admin("GET", "/__status__").body).as_object();
    EXPECT_TRUE(state.at("accepting").as_bool()) << c.head;
    EXPECT_EQ(d.get("/readyz").status, 200) << c.head;
    EXPECT_EQ(d.get("/healthz").status, 200);
    auto client = corral::client::Client::connect(d.url());
    auto outcome = client->execute(request("async () => 6 * 7"));
    ASSERT_TRUE(outcome.ok()) << outcome.failure().message;
    EXPECT_EQ(outcome.execution().value(), "42");
  }
  // The same setting guards the executor: a foreign page's upgrade is
  // refused, the allowed origin's and a non-browser client's are not.
  const std::string upgrade =
      "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
      "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";
  EXPECT_EQ(raw_http(d.port, upgrade + "Origin: https://attacker.example\r\n").first, 403);
  EXPECT_EQ(raw_http(d.port, upgrade + "Origin: https://console.example\r\n").first, 101);
  EXPECT_EQ(raw_http(d.port, upgrade).first, 101);
  // An operator's console on the allowed origin may switch maintenance.
  EXPECT_EQ(raw_http(d.admin_port,
                     "PUT /__maintenance__ HTTP/1.1\r\nHost: localhost\r\n"
                     "Origin: https://console.example\r\n")
                .first,
            200);
  EXPECT_EQ(d.get("/readyz").status, 503);
  EXPECT_EQ(d.admin("DELETE", "/__maintenance__").status, 200);
  EXPECT_EQ(d.get("/readyz").status, 200);
}

TEST(Admin, StatusSummarisesForPeopleAndPrintsTheJsonOnRequest) {
  Daemon d({"--max-workers", "1"}, {"CORRAL_MAX_WORKER=1"});
  auto client = corral::client::Client::connect(d.url());
  EXPECT_TRUE(client->execute(request("async () => 1")).ok());
  corral::client::ExecuteRequest spin = request("async () => { while (true) {} }");
  spin.timeout = corral::client::Timeout::of(100ms);
  EXPECT_EQ(client->execute(spin).failure().code, corral::FailureCode::timeout);
  const std::string port = std::to_string(d.admin_port);

  Process summary({kCorral, "status", "--admin-port", port});
  EXPECT_EQ(summary.wait(), 0);
  const std::string text = summary.stdout_rest();
  EXPECT_NE(text.find("corral serve on 127.0.0.1:" + std::to_string(d.port) + ": accepting, up "),
            std::string::npos)
      << text;
  EXPECT_TRUE(std::regex_search(text, std::regex("\n  workers      [0-9]+ live, [0-9]+ started")))
      << text;
  EXPECT_NE(text.find("\n  executions   0 running; 1 ok, 1 timeout\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n  queue        0 waiting\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n  protections  "), std::string::npos) << text;
  EXPECT_EQ(text.find('{'), std::string::npos) << "no JSON without --json: " << text;

  Process json({kCorral, "status", "--json", "--admin-port", port});
  EXPECT_EQ(json.wait(), 0);
  const std::string body = json.stdout_rest();
  const auto o = boost::json::parse(body).as_object();
  EXPECT_EQ(o.at("executions").at("by_outcome").at("timeout").as_int64(), 1);
  // Numbers as numbers: Boost.JSON's writer printed 2.803851215E0.
  EXPECT_EQ(body.find("E0"), std::string::npos) << body;
  EXPECT_TRUE(std::regex_search(body, std::regex(R"("uptime_seconds":[0-9]+\.[0-9]+,)"))) << body;

  // The mistyped variable was reported in the log, with the setting meant.
  d.process.signal(SIGTERM);
  EXPECT_EQ(d.process.wait(), 0);
  EXPECT_NE(d.process.stderr_text().find(
                "warn  CORRAL_MAX_WORKER names no setting; it is ignored (did you mean "
                "CORRAL_MAX_WORKERS?)"),
            std::string::npos)
      << d.process.stderr_text();
}

TEST(Admin, BearerTokenGuardsTheExecutor) {
  Daemon d({"--auth-token", "s3cret"});
  try {
    corral::client::Client::connect(d.url());
    ADD_FAILURE() << "connected without a token";
  } catch (const corral::Error& e) {
    EXPECT_EQ(e.code(), corral::FailureCode::connection_rejected);
  }
  auto client = corral::client::Client::connect(d.url(), {.authorization = "Bearer s3cret"});
  EXPECT_TRUE(client->execute(request("async () => 1")).ok());
}

TEST(Admin, MaintenanceFromTheCommandLine) {
  Daemon d({});
  const std::string port = std::to_string(d.admin_port);
  Process on({kCorral, "maintenance", "on", "--admin-port", port});
  EXPECT_EQ(on.wait(), 0);
  EXPECT_NE(on.stdout_rest().find("\"maintenance\":true"), std::string::npos);
  EXPECT_EQ(d.get("/readyz").status, 503);
  EXPECT_EQ(d.get("/healthz").status, 200);
  Process status({kCorral, "status", "--json", "--admin-port", port});
  EXPECT_EQ(status.wait(), 0);
  EXPECT_NE(status.stdout_rest().find("\"accepting\":false"), std::string::npos);
  Process summary({kCorral, "status", "--admin-port", port});
  EXPECT_EQ(summary.wait(), 0);
  EXPECT_NE(summary.stdout_rest().find(": in maintenance (new connections refused), up "),
            std::string::npos);
  Process off({kCorral, "maintenance", "off", "--admin-port", port});
  EXPECT_EQ(off.wait(), 0);
  EXPECT_EQ(d.get("/readyz").status, 200);
  // A daemon that isn't there: a clear error, exit 1, no hang.
  Process nobody({kCorral, "status", "--admin-port", "1"});
  EXPECT_EQ(nobody.wait(10s), 1);
  EXPECT_NE(nobody.stderr_text().find("admin listener at 127.0.0.1:1: connect"), std::string::npos);
}

TEST(Stop, SigtermUnderLoadFinishesRunsAndExitsZero) {
  Daemon d({"--shutdown-delay", "1s", "--shutdown-grace", "20s", "--max-workers", "2"});
  std::atomic<int> calls{0};
  std::vector<std::thread> runs;
  std::vector<std::optional<corral::client::Outcome>> outcomes(2);
  std::promise<void> both_calling;
  for (int i = 0; i < 2; ++i) {
    runs.emplace_back([&, i] {
      auto client = corral::client::Client::connect(d.url());
      corral::client::ExecuteRequest r = request("async () => (await codemode.slow({})).v");
      r.tools = {{.name = "slow", .description = "", .input_schema = ""}};
      outcomes[i].emplace(client->execute(r, [&](const std::string&, const std::string&) {
        if (++calls == 2) both_calling.set_value();
        std::this_thread::sleep_for(1500ms);  // a slow tool, not synchronisation
        return std::string(R"({"v":7})");
      }));
    });
  }
  both_calling.get_future().get();
  d.process.signal(SIGTERM);
  // Readiness fails at once, liveness stays.
  const auto probed = std::chrono::steady_clock::now();
  int ready = 200;
  while (ready == 200 && std::chrono::steady_clock::now() - probed < 900ms)
    ready = d.get("/readyz").status;
  EXPECT_EQ(ready, 503);
  for (auto& t : runs) t.join();
  for (auto& o : outcomes) {
    ASSERT_TRUE(o.has_value());
    ASSERT_TRUE(o->ok()) << o->failure().message;
    EXPECT_EQ(o->execution().value(), "7");
  }
  EXPECT_EQ(d.process.wait(), 0) << d.process.stderr_text();
}

TEST(Stop, AStopThatOutlivesItsGraceExitsNonZeroAndSaysWhatWasRunning) {
  // A worker that says it is ready, never answers and ignores SIGTERM. It
  // leaves once the daemon is gone (a real worker dies with it through
  // PR_SET_PDEATHSIG, which a script cannot set), or every run of this
  // test would leave a shell looping on the machine for good.
  const std::string script = testing::TempDir() + "/stubborn_worker.sh";
  {
    std::ofstream out(script);
    out << "#!/bin/bash\ntrap '' TERM\n"
           "printf '\\x00\\x00\\x00\\x1f{\"t\":\"ready\",\"protections\":{}}' >&3\n"
           "while kill -0 $PPID 2>/dev/null; do sleep 0.2; done\n";
  }
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  Daemon d({"--worker", script, "--shutdown-delay", "500ms", "--shutdown-grace", "1s",
            "--max-workers", "1"});
  std::promise<void> sent;
  std::thread run([&] {
    auto client = corral::client::Client::connect(d.url());
    std::thread([&] {
      // The run is in the pool once the status says so.
      while (true) {
        auto status = boost::json::parse(d.admin("GET", "/__status__").body).as_object();
        if (status.at("executions").as_object().at("running").as_int64() == 1) break;
      }
      sent.set_value();
    }).detach();
    client->execute(request("async () => 1"));
  });
  sent.get_future().get();
  d.process.signal(SIGTERM);
  EXPECT_EQ(d.process.wait(10s), 1);
  const std::string err = d.process.stderr_text();
  EXPECT_NE(err.find("the stop outlived its shutdown grace of 1000 ms; still running: 0 "
                     "executions, 1 worker processes"),
            std::string::npos)
      << err;
  run.join();
}

// --- Operator edges: SIGHUP, a second SIGTERM, idempotent admin changes ---

void write_atomically(const std::string& path, const std::string& text) {
  {
    std::ofstream out(path + ".next");
    out << text;
  }
  std::filesystem::rename(path + ".next", path);
}

bool admitted(const Daemon& d, const std::string& authorization) {
  try {
    auto client = corral::client::Client::connect(d.url(), {.authorization = authorization});
    return client->execute(request("async () => 1")).ok();
  } catch (const corral::Error& e) {
    EXPECT_EQ(e.code(), corral::FailureCode::connection_rejected) << e.what();
    return false;
  }
}

TEST(Operator, SighupReloadsTheTokenFileAndLogsCountsNotTokens) {
  const std::string file = testing::TempDir() + "/sighup_tokens";
  write_atomically(file, "# operators\nold-token-aaa\nkept-token-bbb\n");
  Daemon d({"--auth-token-file", file});
  EXPECT_TRUE(admitted(d, "Bearer old-token-aaa"));
  auto held = corral::client::Client::connect(d.url(), {.authorization = "Bearer old-token-aaa"});

  write_atomically(file, "kept-token-bbb\nnew-token-ccc\n");
  d.process.signal(SIGHUP);
  ASSERT_TRUE(d.process.wait_for_stderr("token file reloaded: 2 tokens (1 added, 1 removed)"))
      << d.process.stderr_text();
  EXPECT_FALSE(admitted(d, "Bearer old-token-aaa"));
  EXPECT_TRUE(admitted(d, "Bearer new-token-ccc"));
  EXPECT_TRUE(admitted(d, "Bearer kept-token-bbb"));
  // The connection admitted before the reload keeps working.
  EXPECT_TRUE(held->execute(request("async () => 2")).ok());

  // A file that holds no token, then none at all: the tokens in force stay.
  write_atomically(file, "# nobody\n");
  d.process.signal(SIGHUP);
  ASSERT_TRUE(d.process.wait_for_stderr("holds no token")) << d.process.stderr_text();
  EXPECT_TRUE(admitted(d, "Bearer new-token-ccc"));
  std::filesystem::remove(file);
  d.process.signal(SIGHUP);
  ASSERT_TRUE(d.process.wait_for_stderr("cannot read " + file)) << d.process.stderr_text();
  EXPECT_TRUE(admitted(d, "Bearer new-token-ccc"));
  EXPECT_FALSE(admitted(d, "Bearer old-token-aaa"));
  EXPECT_EQ(d.get("/healthz").status, 200);

  const std::string err = d.process.stderr_text();
  for (const char* token : {"old-token-aaa", "kept-token-bbb", "new-token-ccc"})
    EXPECT_EQ(err.find(token), std::string::npos) << token << " in the log:\n" << err;
  d.process.signal(SIGTERM);
  EXPECT_EQ(d.process.wait(), 0);
}

// One JSON line per answered execute, naming the caller by its token's
// name (never the token), and a debug line per accepted connection.
TEST(Operator, EachExecutionIsOneJsonLogLineWithTheCallersIdentity) {
  const std::string file = testing::TempDir() + "/execution_log_tokens";
  write_atomically(file, "first-token-aaa\nsecond-token-bbb\n");
  Daemon d({"--auth-token-file", file, "--log-format", "json", "--log-level", "debug"});
  {
    auto client =
        corral::client::Client::connect(d.url(), {.authorization = "Bearer second-token-bbb"});
    corral::client::ExecuteRequest asked = request("async () => (await codemode.one({})) + 1");
    asked.tools = {{"one", "", ""}};
    ASSERT_TRUE(
        client->execute(asked, [](const std::string&, const std::string&) { return "1"; }).ok());
    EXPECT_FALSE(client->execute(request("throw new Error('no')")).ok());
  }
  ASSERT_TRUE(d.process.wait_for_stderr("\"failure\":\"guest_error\"")) << d.process.stderr_text();
  std::vector<boost::json::object> executions;
  bool accepted = false;
  std::istringstream lines(d.process.stderr_text());
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line.front() != '{') continue;
    const boost::json::object o = boost::json::parse(line).as_object();
    if (o.at("message") == "execution") executions.push_back(o);
    const std::string_view message = o.at("message").as_string();
    if (message.starts_with("accepted a WebSocket connection from") &&
        message.ends_with(" as token-2")) {
      accepted = o.at("level") == "debug";
    }
  }
  EXPECT_TRUE(accepted) << d.process.stderr_text();
  ASSERT_EQ(executions.size(), 2u) << d.process.stderr_text();
  const boost::json::object& ok = executions[0];
  EXPECT_EQ(ok.at("level"), "info");
  EXPECT_EQ(ok.at("identity"), "token-2");
  EXPECT_EQ(ok.at("language"), "javascript");
  EXPECT_EQ(ok.at("outcome"), "ok");
  EXPECT_FALSE(ok.contains("failure"));
  EXPECT_EQ(ok.at("tool_calls").to_number<int>(), 1);
  EXPECT_GE(ok.at("worker").to_number<int>(), 1);
  for (const char* field : {"seconds", "queue_seconds", "run_seconds"})
    EXPECT_GE(ok.at(field).to_number<double>(), 0) << field;
  EXPECT_GT(ok.at("response_bytes").to_number<int>(), 0);
  EXPECT_TRUE(ok.at("id").is_number() || ok.at("id").is_string());
  const boost::json::object& failed = executions[1];
  EXPECT_EQ(failed.at("outcome"), "failure");
  EXPECT_EQ(failed.at("failure"), "guest_error");
  EXPECT_NE(failed.at("id"), ok.at("id"));
  const std::string err = d.process.stderr_text();
  for (const char* token : {"first-token-aaa", "second-token-bbb"})
    EXPECT_EQ(err.find(token), std::string::npos) << token << " in the log:\n" << err;
  d.process.signal(SIGTERM);
  EXPECT_EQ(d.process.wait(), 0);
}

TEST(Operator, TheBearerSchemeIsCaseInsensitive) {
  Daemon d({"--auth-token", "s3cret"});
  for (const char* authorization :
       {"Bearer s3cret", "bearer s3cret", "BEARER s3cret", "bEaReR    s3cret"})
    EXPECT_TRUE(admitted(d, authorization)) << authorization;
  for (const char* authorization :
       {"Bearers3cret", "Basic s3cret", "Bearer", "Bearer s3cret extra", "Bearer S3CRET"})
    EXPECT_FALSE(admitted(d, authorization)) << authorization;
}

TEST(Operator, ASecondSigtermDuringTheDrainStopsAtOnceAndLeavesNoWorker) {
  Daemon d({"--shutdown-grace", "60s", "--max-workers", "1"});
  std::thread run([&] {
    auto client = corral::client::Client::connect(d.url());
    corral::client::ExecuteRequest r = request("async () => { for (;;) {} }");
    r.timeout = corral::client::Timeout::of(50s);
    client->execute(r);  // broken by the forced stop
  });
  while (boost::json::parse(d.admin("GET", "/__status__").body)
             .as_object()
             .at("executions")
             .as_object()
             .at("running")
             .as_int64() != 1) {
  }
  std::vector<pid_t> workers = children_of(d.process.pid());
  for (pid_t child : std::vector<pid_t>(workers)) {
    for (pid_t grandchild : children_of(child)) workers.push_back(grandchild);
  }
  ASSERT_FALSE(workers.empty());
  d.process.signal(SIGTERM);
  // The drain has begun once readiness fails; the run holds it open.
  while (d.get("/readyz").status == 200) {
  }
  const auto second = std::chrono::steady_clock::now();
  d.process.signal(SIGTERM);
  EXPECT_EQ(d.process.wait(10s), 3);
  EXPECT_LT(std::chrono::steady_clock::now() - second, 3s);
  const std::string err = d.process.stderr_text();
  EXPECT_NE(err.find("received a second SIGTERM during the stop: stopping at once (exit 3)"),
            std::string::npos)
      << err;
  // Every worker process is gone (re-parented and reaped, or never a zombie
  // for long).
  for (pid_t pid : workers) {
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (::kill(pid, 0) == 0 && process_state(pid) != "Z" &&
           std::chrono::steady_clock::now() < deadline) {
      pollfd none{-1, 0, 0};
      ::poll(&none, 1, 20);  // a process's exit has no fd to wait on
    }
    EXPECT_TRUE(::kill(pid, 0) != 0 || process_state(pid) == "Z")
        << "worker " << pid << " survived";
  }
  run.join();
}

TEST(Operator, MaintenanceChangesAreIdempotentAndSayTheState) {
  Daemon d({});
  EXPECT_EQ(d.admin("PUT", "/__maintenance__").body, "{\"maintenance\":true,\"changed\":true}\n");
  EXPECT_EQ(d.admin("PUT", "/__maintenance__").body, "{\"maintenance\":true,\"changed\":false}\n");
  EXPECT_EQ(d.admin("DELETE", "/__maintenance__").body,
            "{\"maintenance\":false,\"changed\":true}\n");
  EXPECT_EQ(d.admin("DELETE", "/__maintenance__").body,
            "{\"maintenance\":false,\"changed\":false}\n");
  EXPECT_EQ(d.get("/readyz").status, 200);
}

TEST(Operator, AMaintenanceOnThatTimedOutIsNeverAppliedLater) {
  Daemon d({});
  // A daemon that cannot answer in time: stopped, its sockets still queue.
  d.process.signal(SIGSTOP);
  Process on({kCorral, "maintenance", "on", "--admin-port", std::to_string(d.admin_port)});
  EXPECT_EQ(on.wait(20s), 1);
  EXPECT_NE(on.stderr_text().find("no answer within 5 s"), std::string::npos) << on.stderr_text();
  d.process.signal(SIGCONT);
  // The request it had queued is read now, after its caller gave up.
  EXPECT_TRUE(d.process.wait_for_stderr("the caller hung up before it was handled; not applied"))
      << d.process.stderr_text();
  EXPECT_EQ(d.admin("GET", "/__maintenance__").body, "{\"maintenance\":false,\"changed\":false}\n");
  EXPECT_EQ(d.get("/readyz").status, 200);
}

}  // namespace

// Bound commands' slots and upstream servers are in /__status__, `corral
// status` and /metrics (promtool-valid); a killed upstream is restarted and
// counted. Issue 15.
TEST(Admin, BoundCommandSlotsAndUpstreamsAreShownAndAKilledUpstreamRestarts) {
  const std::string src = CORRAL_SOURCE_DIR;
  const std::string upstream = R"({"probe": {"command": ["/bin/sh", ")" + src +
                               R"(/tests/mcp/fixtures/env_upstream.sh"],)"
                               R"( "confinement": {"binds": [")" +
                               src + R"(/tests/mcp/fixtures"]}}})";
  Daemon d({"--max-workers", "1", "--mcp-manifest", src + "/tests/mcp/fixtures/mcp_tools.yaml",
            "--mcp-upstream", upstream});
  auto state = [&] { return boost::json::parse(d.admin("GET", "/__status__").body).as_object(); };
  auto find = [](const boost::json::object& s, const char* list, std::string_view name) {
    for (const auto& e : s.at(list).as_array())
      if (e.at("name").as_string() == name) return e.as_object();
    return boost::json::object{};
  };
  boost::json::object s = state();
  const boost::json::object commands = find(s, "commands", "fixture");
  ASSERT_FALSE(commands.empty()) << boost::json::serialize(s);
  EXPECT_EQ(commands.at("slots").as_int64(), 2);
  EXPECT_EQ(commands.at("running").as_int64(), 0);
  EXPECT_EQ(commands.at("slot_status").as_array().size(), 2u);
  EXPECT_EQ(commands.at("slot_status").at(0).at("state").as_string(), "idle");
  const boost::json::object up = find(s, "upstreams", "probe");
  ASSERT_FALSE(up.empty()) << boost::json::serialize(s);
  EXPECT_EQ(up.at("state").as_string(), "up");
  const auto first = static_cast<pid_t>(up.at("pid").as_int64());
  ASSERT_GT(first, 0);

  ASSERT_EQ(::kill(first, SIGKILL), 0);
  const auto end = std::chrono::steady_clock::now() + 10s;
  boost::json::object now;
  while (std::chrono::steady_clock::now() < end) {  // a snapshot polled: no event to await
    now = find(state(), "upstreams", "probe");
    if (now.at("state").as_string() == "up" && now.at("pid").as_int64() != first) break;
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(now.at("state").as_string(), "up") << boost::json::serialize(now);
  EXPECT_NE(now.at("pid").as_int64(), first);
  EXPECT_EQ(now.at("restarts").as_int64(), 1);
  EXPECT_EQ(now.at("last_exit").as_string(), "signal 9");

  Process summary({kCorral, "status", "--admin-port", std::to_string(d.admin_port)});
  EXPECT_EQ(summary.wait(), 0);
  const std::string text = summary.stdout_rest();
  EXPECT_NE(text.find("\n  command      fixture: 0 of 2 slots taken, 0 cleanup_failed; "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n  upstream     probe (stdio): up, pid "), std::string::npos) << text;
  EXPECT_NE(text.find(", last exit: signal 9, unit "), std::string::npos) << text;
  EXPECT_NE(text.find(", 1 restarts, last exit: signal 9"), std::string::npos) << text;

  const auto metrics = d.get("/metrics");
  ASSERT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("corral_command_slots{binding=\"fixture\",state=\"idle\"} 2\n"),
            std::string::npos)
      << metrics.body;
  EXPECT_NE(metrics.body.find("corral_upstream_restarts_total{upstream=\"probe\"} 1\n"),
            std::string::npos);
  EXPECT_NE(metrics.body.find("corral_executions_total{outcome=\"ok\"}"), std::string::npos);
  if (std::system("command -v promtool >/dev/null 2>&1") == 0) {
    const std::string path = ::testing::TempDir() + "/daemon_metrics." + std::to_string(::getpid());
    std::ofstream(path) << metrics.body;
    EXPECT_EQ(std::system(("promtool check metrics < " + path).c_str()), 0) << metrics.body;
    std::remove(path.c_str());
  }

  // Healthy afterwards: the next request is served, the daemon stops cleanly
  // and the upstream it started is gone.
  EXPECT_EQ(d.get("/healthz").status, 200);
  const auto second = static_cast<pid_t>(now.at("pid").as_int64());
  d.process.signal(SIGTERM);
  EXPECT_EQ(d.process.wait(), 0);
  EXPECT_NE(::kill(second, 0), 0) << "the upstream outlived the daemon";
}
