// tests/daemon/connections_test.cc: the connection economy of `corral serve`
// against hostile clients on real sockets: descriptor exhaustion under a low
// RLIMIT_NOFILE, a slowloris request head, the per-address cap.
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "corral/client.hpp"
#include "daemon/admin.hpp"
#include "gtest/gtest.h"

extern char** environ;

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

const std::string kCorral = CORRAL_BINARY;

// `corral serve` on free ports through `sh -c 'ulimit -n N; exec ...'`,
// stdout and stderr on pipes.
class Serve {
 public:
  Serve(int fd_limit, const std::vector<std::string>& flags) {
    std::string command = "ulimit -n " + std::to_string(fd_limit) + "; exec '" + kCorral +
                          "' serve --port 0 --admin-port 0 --max-workers 1";
    for (const auto& flag : flags) command += " '" + flag + "'";
    int out[2], err[2];
    EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(err, O_CLOEXEC), 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err[1], 2);
    std::vector<std::string> args = {"/bin/sh", "-c", command};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    EXPECT_EQ(::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    ::close(err[1]);
    out_ = out[0];
    err_ = err[0];
    ::fcntl(err_, F_SETFL, O_NONBLOCK);
    const std::string line = wait_for(out_, out_text_, "executor on ws://127.0.0.1:", 30s);
    const auto at = line.find("127.0.0.1:");
    if (at != std::string::npos) port = static_cast<std::uint16_t>(std::stoi(line.substr(at + 10)));
  }
  ~Serve() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    ::close(out_);
    ::close(err_);
  }

  // Everything on stderr so far (the daemon's log).
  const std::string& stderr_text() {
    char buffer[8192];
    ssize_t n;
    while ((n = ::read(err_, buffer, sizeof buffer)) > 0) err_text_.append(buffer, n);
    return err_text_;
  }
  // Waits until stderr holds `needle` (or `bound` passes).
  bool await_stderr(const std::string& needle, std::chrono::milliseconds bound) {
    const auto deadline = Clock::now() + bound;
    while (stderr_text().find(needle) == std::string::npos) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) return false;
      pollfd p{err_, POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(left.count()));
    }
    return true;
  }
  // Descriptors the daemon holds open now.
  std::size_t open_fds() const {
    std::size_t count = 0;
    for ([[maybe_unused]] const auto& entry :
         std::filesystem::directory_iterator("/proc/" + std::to_string(pid_) + "/fd")) {
      ++count;
    }
    return count;
  }
  // utime + stime of the daemon, in seconds.
  double cpu_seconds() const {
    std::ifstream stat("/proc/" + std::to_string(pid_) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    std::istringstream rest(text.substr(text.rfind(')') + 2));
    std::vector<std::string> fields;
    for (std::string f; rest >> f;) fields.push_back(f);
    // Fields 14 and 15 of stat(5); `rest` starts at field 3.
    return (std::stod(fields.at(11)) + std::stod(fields.at(12))) /
           static_cast<double>(::sysconf(_SC_CLK_TCK));
  }
  std::string url() const { return "ws://127.0.0.1:" + std::to_string(port) + "/"; }

  std::uint16_t port = 0;

 private:
  static std::string wait_for(int fd, std::string& buffer, const std::string& needle,
                              std::chrono::milliseconds bound) {
    const auto deadline = Clock::now() + bound;
    while (Clock::now() < deadline) {
      std::size_t nl;
      while ((nl = buffer.find('\n')) != std::string::npos) {
        std::string line = buffer.substr(0, nl);
        buffer.erase(0, nl + 1);
        if (line.find(needle) != std::string::npos) return line;
      }
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 1000) < 0) break;
      char chunk[4096];
      const ssize_t n = ::read(fd, chunk, sizeof chunk);
      if (n <= 0) break;
      buffer.append(chunk, static_cast<std::size_t>(n));
    }
    return {};
  }

  pid_t pid_ = -1;
  int out_ = -1, err_ = -1;
  std::string out_text_, err_text_;
};

int connect_to(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  return fd;
}

// Reads until the peer closes or `bound` passes.
std::string read_all(int fd, std::chrono::milliseconds bound) {
  std::string text;
  const auto deadline = Clock::now() + bound;
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    char buffer[4096];
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

const std::string kHealthz =
    "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";

corral::client::ExecuteRequest trivial() {
  corral::client::ExecuteRequest r;
  r.code = "async () => 6 * 7";
  return r;
}

TEST(Connections, RunningOutOfDescriptorsNeitherSpinsNorFloodsTheLogAndRecovers) {
  Serve d(64, {});
  ASSERT_NE(d.port, 0);
  std::vector<int> idle;
  for (int i = 0; i < 150; ++i) idle.push_back(connect_to(d.port));
  ASSERT_TRUE(d.await_stderr("accept failed", 10s)) << d.stderr_text();
  const std::size_t log_before = d.stderr_text().size();
  const double cpu_before = d.cpu_seconds();
  // The measurement window itself: a spinning accept loop burns it whole.
  std::this_thread::sleep_for(2s);
  const double cpu = d.cpu_seconds() - cpu_before;
  const std::size_t logged = d.stderr_text().size() - log_before;
  EXPECT_LT(cpu, 0.5);
  EXPECT_LT(logged, 2048u) << d.stderr_text();
  // The connections past the limit were told, not left hanging.
  std::size_t told = 0;
  for (int fd : idle) {
    char buffer[512];
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n > 12 && std::string(buffer, 12) == "HTTP/1.1 503") ++told;
  }
  EXPECT_GT(told, 0u);
  // A caller arriving while the descriptors are still exhausted is told at
  // once, not when a backoff timer (up to 1 s) next fires.
  const auto asked = Clock::now();
  const int late = connect_to(d.port);
  ::send(late, kHealthz.data(), kHealthz.size(), MSG_NOSIGNAL);
  const std::string late_answer = read_all(late, 3s);
  const auto told_after =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - asked);
  ::close(late);
  EXPECT_EQ(late_answer.rfind("HTTP/1.1 503", 0), 0u) << late_answer;
  EXPECT_LT(told_after.count(), 250) << late_answer;
  for (int fd : idle) ::close(fd);
  // Probes answer as soon as the descriptors are free again: the first
  // connection after the server saw its idle ones close.
  const auto started = Clock::now();
  std::string answer;
  for (int attempt = 0; attempt < 100 && answer.find("200 OK") == std::string::npos; ++attempt) {
    const int fd = connect_to(d.port);
    ::send(fd, kHealthz.data(), kHealthz.size(), MSG_NOSIGNAL);
    answer = read_all(fd, 1s);
    ::close(fd);
  }
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  EXPECT_NE(answer.find("200 OK"), std::string::npos) << answer;
  EXPECT_LT(took.count(), 100) << answer;
  auto client = corral::client::Client::connect(d.url());
  auto outcome = client->execute(trivial());
  ASSERT_TRUE(outcome.ok()) << outcome.failure().message;
  EXPECT_EQ(outcome.execution().value(), "42");
  client->close();
  std::printf(
      "cpu %.3f s over 2 s, %zu log bytes, %zu of 150 told 503, a late caller told after %lld ms, "
      "healthz after %lld ms\n",
      cpu, logged, told, static_cast<long long>(told_after.count()),
      static_cast<long long>(took.count()));
}

TEST(Connections, ASlowlorisRequestHeadIsCutAtTheHeaderTimeout) {
  Serve d(1024, {"--header-timeout", "1s"});
  ASSERT_NE(d.port, 0);
  const std::string head =
      "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
      "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
      "X-Padding: "
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
  const int fd = connect_to(d.port);
  const auto started = Clock::now();
  bool cut = false;
  for (char byte : head) {
    if (::send(fd, &byte, 1, MSG_NOSIGNAL) != 1) {
      cut = true;
      break;
    }
    // One byte each 100 ms, watching for the server closing meanwhile.
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) {
      char buffer[256];
      if (::recv(fd, buffer, sizeof buffer, 0) <= 0) {
        cut = true;
        break;
      }
    }
  }
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  ::close(fd);
  EXPECT_TRUE(cut);
  EXPECT_GE(took.count(), 900);
  EXPECT_LT(took.count(), 2000);
  std::printf("slowloris cut after %lld ms\n", static_cast<long long>(took.count()));
  const int probe = connect_to(d.port);
  ::send(probe, kHealthz.data(), kHealthz.size(), MSG_NOSIGNAL);
  EXPECT_NE(read_all(probe, 1s).find("200 OK"), std::string::npos);
  ::close(probe);
}

TEST(Connections, ThePerAddressCapRefusesWith503AndFreesOnClose) {
  Serve d(1024, {"--max-connections-per-address", "2"});
  ASSERT_NE(d.port, 0);
  const int first = connect_to(d.port);
  const int second = connect_to(d.port);
  const int third = connect_to(d.port);
  const std::string refused = read_all(third, 2s);
  ::close(third);
  EXPECT_EQ(refused.rfind("HTTP/1.1 503", 0), 0u) << refused;
  EXPECT_NE(refused.find("Retry-After: 1"), std::string::npos) << refused;
  EXPECT_NE(refused.find("application/json"), std::string::npos) << refused;
  EXPECT_NE(refused.find(R"({"error":"Service Unavailable: )"), std::string::npos) << refused;
  // One of the two ends a request with Connection: close; once the server
  // has closed it, the next client gets in.
  ::send(first, kHealthz.data(), kHealthz.size(), MSG_NOSIGNAL);
  EXPECT_NE(read_all(first, 2s).find("200 OK"), std::string::npos);
  ::close(first);
  std::string answer;
  const auto started = Clock::now();
  // The server releases the slot just after the close the client saw.
  while (answer.find("200 OK") == std::string::npos && Clock::now() - started < 2s) {
    const int next = connect_to(d.port);
    ::send(next, kHealthz.data(), kHealthz.size(), MSG_NOSIGNAL);
    answer = read_all(next, 1s);
    ::close(next);
  }
  EXPECT_NE(answer.find("200 OK"), std::string::npos) << answer;
  const int metrics = connect_to(d.port);
  const std::string get = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  ::send(metrics, get.data(), get.size(), MSG_NOSIGNAL);
  const std::string scrape = read_all(metrics, 2s);
  ::close(metrics);
  EXPECT_EQ(scrape.find("corral_connection_rejections_total 0"), std::string::npos) << scrape;
  EXPECT_NE(scrape.find("corral_connection_rejections_total"), std::string::npos) << scrape;
  ::close(second);
}

TEST(Connections, ABurstPastTheCapIsToldWithoutHoldingADescriptorEach) {
  Serve d(4096, {"--max-connections", "20"});
  ASSERT_NE(d.port, 0);
  std::vector<int> admitted;
  for (int i = 0; i < 20; ++i) admitted.push_back(connect_to(d.port));
  // The 21st is refused: all 20 are accepted by now.
  const int probe = connect_to(d.port);
  EXPECT_EQ(read_all(probe, 2s).rfind("HTTP/1.1 503", 0), 0u);
  ::close(probe);
  const std::size_t before = d.open_fds();
  std::vector<int> burst;
  for (int i = 0; i < 400; ++i) burst.push_back(connect_to(d.port));
  std::size_t told = 0;
  for (int fd : burst) {
    if (read_all(fd, 2s).rfind("HTTP/1.1 503", 0) == 0) ++told;
  }
  // Every refused caller was told, and the daemon holds at most the bounded
  // set of lingering refusals (32) for them, not one descriptor each, while
  // the 400 clients keep their ends open.
  const std::size_t during = d.open_fds();
  EXPECT_EQ(told, burst.size());
  // Slack for refusals being written or closed at the moment of the count
  // (seen: 33 over); without the bound it was 399 over.
  EXPECT_LE(during, before + 32 + 8) << "before " << before << ", during " << during;
  for (int fd : burst) ::close(fd);
  for (int fd : admitted) ::close(fd);
  auto client = corral::client::Client::connect(d.url());
  auto outcome = client->execute(trivial());
  ASSERT_TRUE(outcome.ok()) << outcome.failure().message;
  client->close();
  std::printf("400 past a cap of 20: %zu told 503; daemon fds %zu before, %zu during\n", told,
              before, during);
}

}  // namespace
