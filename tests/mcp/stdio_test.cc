// `corral mcp` as a real process: only protocol messages on stdout, logs on
// stderr, a clean exit when stdin closes, refused settings named.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>
#include "core/json.hpp"
#include "core/utf8.hpp"
#include "mcp_test_util.hpp"
#include "process/limits.hpp"

#include <gtest/gtest.h>

extern char** environ;

namespace {

namespace json = corral::core::json;

// McpProcess: `corral mcp ARGS` with its three streams on pipes.
class McpProcess {
 public:
  explicit McpProcess(std::vector<std::string> args) {
    int in[2], out[2], err[2];
    EXPECT_EQ(::pipe2(in, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(err, O_CLOEXEC), 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err[1], 2);
    std::vector<std::string> argv = {CORRAL_BINARY, "mcp"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> raw;
    for (auto& a : argv) raw.push_back(a.data());
    raw.push_back(nullptr);
    EXPECT_EQ(posix_spawn(&pid_, CORRAL_BINARY, &actions, nullptr, raw.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    in_ = in[1];
    out_ = out[0];
    err_ = err[0];
  }
  ~McpProcess() {
    close_stdin();
    wait();
    ::close(out_);
    ::close(err_);
  }

  void send(const std::string& line) {
    const std::string data = line + "\n";
    ASSERT_EQ(::write(in_, data.data(), data.size()), static_cast<ssize_t>(data.size()));
  }
  // The next stdout line (bounded wait); empty at end of file.
  std::string line() {
    while (true) {
      const auto nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        std::string l = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return l;
      }
      pollfd p{out_, POLLIN, 0};
      if (::poll(&p, 1, 30'000) <= 0) {
        ADD_FAILURE() << "no line from corral mcp in 30 s";
        return {};
      }
      char chunk[4096];
      const ssize_t n = ::read(out_, chunk, sizeof chunk);
      if (n <= 0) return {};
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }
  void close_stdin() {
    if (in_ >= 0) ::close(in_);
    in_ = -1;
  }
  void signal(int sig) {
    if (pid_ > 0) ::kill(pid_, sig);
  }
  int wait() {
    if (pid_ <= 0) return status_;
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = 0;
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return status_;
  }
  std::string rest_of_stdout() {
    std::string all = buffer_;
    char chunk[4096];
    ssize_t n;
    while ((n = ::read(out_, chunk, sizeof chunk)) > 0)
      all.append(chunk, static_cast<std::size_t>(n));
    return all;
  }
  std::string stderr_text() {
    std::string all;
    char chunk[4096];
    ssize_t n;
    while ((n = ::read(err_, chunk, sizeof chunk)) > 0)
      all.append(chunk, static_cast<std::size_t>(n));
    return all;
  }

 private:
  pid_t pid_ = 0;
  int status_ = -1;
  int in_ = -1, out_ = -1, err_ = -1;
  std::string buffer_;
};

const std::string kManifest = std::string(CORRAL_SOURCE_DIR) + "/tests/mcp/fixtures/mcp_tools.yaml";

TEST(McpStdio, SpeaksOnlyJsonRpcOnStdoutAndExitsWhenStdinCloses) {
  McpProcess p({"--mcp-manifest", kManifest, "--max-workers", "1", "--log-level", "debug"});
  p.send(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
  json::value init = json::parse(p.line());
  EXPECT_EQ(init.at("result").at("protocolVersion").as_string(), "2025-06-18");
  p.send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  p.send("this is not json");
  EXPECT_EQ(json::parse(p.line()).at("error").at("code").to_number<int>(), -32700);
  p.send(
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute","arguments":{"code":"async () => { console.log('to the result, not stdout'); return (await codemode.fixture_greet({flags:{name:'stdio'}})).stdout; }"}}})");
  json::value r = json::parse(p.line());
  EXPECT_EQ(r.at("id").to_number<int>(), 2);
  EXPECT_EQ(r.at("result").at("structuredContent").at("value").as_string(), "hello, stdio\n");
  p.close_stdin();
  EXPECT_EQ(p.wait(), 0);
  EXPECT_EQ(p.rest_of_stdout(), "");  // nothing but the answers
  EXPECT_NE(p.stderr_text().find("serving MCP on stdio"), std::string::npos);
}

TEST(McpStdio, RefusedSettingsAreNamedAndExitOne) {
  McpProcess p({"--mcp-mode", "sideways", "--mcp-upstream", R"({"x": {}})"});
  EXPECT_EQ(p.wait(), 1);
  const std::string err = p.stderr_text();
  EXPECT_NE(err.find("--mcp-mode or CORRAL_MCP_MODE: must be one of direct, compact"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("--mcp-upstream or CORRAL_MCP_UPSTREAM: upstream \"x\""), std::string::npos)
      << err;
  EXPECT_EQ(p.rest_of_stdout(), "");
}

TEST(McpStdio, AManifestThatCannotBeBoundStopsTheStart) {
  McpProcess p({"--mcp-manifest", "/no/such/manifest.yaml"});
  EXPECT_EQ(p.wait(), 1);
  EXPECT_NE(p.stderr_text().find("manifest /no/such/manifest.yaml"), std::string::npos);
}

const std::string kNotUtf8 = std::string(CORRAL_SOURCE_DIR) + "/tests/mcp/fixtures/not_utf8.yaml";

// One answer line: valid UTF-8 (so valid JSON), for request `id`.
json::object answer(McpProcess& p, int id) {
  const std::string line = p.line();
  EXPECT_TRUE(corral::core::is_valid_utf8(line)) << line;
  json::value v = json::parse(line);
  EXPECT_EQ(v.at("id").to_number<int>(), id) << line;
  return v.at("result").as_object();
}

std::string call(int id, const std::string& tool, const std::string& arguments) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
         R"(,"method":"tools/call","params":{"name":")" + tool + R"(","arguments":)" + arguments +
         "}}";
}

TEST(McpStdio, OutputThatIsNotUtf8ReadsAsReplacementAndTheSessionGoesOn) {
  McpProcess p({"--mcp-manifest", kNotUtf8, "--max-workers", "1"});
  p.send(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
  answer(p, 1);
  p.send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");

  // A bound command printing \xff: corral mcp used to abort here.
  p.send(call(2, "bytes_bad_byte", "{}"));
  json::object bad = answer(p, 2);
  EXPECT_FALSE(bad.contains("isError"));
  const json::object& view = bad.at("structuredContent").as_object();
  EXPECT_EQ(view.at("stdout").as_string(), "a\uFFFDb");
  EXPECT_EQ(view.at("stderr").as_string(), "\uFFFD");
  EXPECT_EQ(view.at("replaced"), true);
  EXPECT_EQ(view.at("truncated"), false);
  EXPECT_NE(json::serialize(bad.at("content")).find("not UTF-8"), std::string::npos);

  // Valid UTF-8 that the 10-byte output budget cuts inside the euro sign.
  p.send(call(3, "bytes_cut_char", "{}"));
  json::object cut = answer(p, 3);
  const json::object& cut_view = cut.at("structuredContent").as_object();
  EXPECT_EQ(cut_view.at("stdout").as_string(), "aaaaaaaa");
  EXPECT_EQ(cut_view.at("truncated"), true);
  EXPECT_FALSE(cut_view.contains("replaced"));

  // Code mode: the command's answer crosses the pool's frames to the guest.
  p.send(call(
      4, "execute",
      R"({"code":"async () => { const r = await codemode.bytes_bad_byte({}); return [r.stdout, r.replaced]; }"})"));
  json::object code = answer(p, 4);
  EXPECT_FALSE(code.contains("isError")) << json::serialize(code);
  EXPECT_EQ(code.at("structuredContent").at("value"), (json::array{"a\uFFFDb", true}));

  // Guest output: a Ruby string is bytes.
  p.send(call(5, "execute", R"({"code":"puts \"x\\xff\"\n1","language":"ruby"})"));
  json::object ruby = answer(p, 5);
  EXPECT_FALSE(ruby.contains("isError")) << json::serialize(ruby);
  EXPECT_EQ(ruby.at("structuredContent").at("replaced"), true) << json::serialize(ruby);
  EXPECT_NE(json::serialize(ruby.at("content")).find("x\uFFFD\\n"), std::string::npos)
      << json::serialize(ruby);

  // And the session still answers.
  p.send(R"({"jsonrpc":"2.0","id":6,"method":"ping"})");
  answer(p, 6);
  p.close_stdin();
  EXPECT_EQ(p.wait(), 0);
}

TEST(McpStdio, AnUpstreamAnswerThatIsNotUtf8ReachesTheGuestAsReplacement) {
  // Confined (the default) with the fixture's folder bound read-only.
  const std::string fixtures = std::string(CORRAL_SOURCE_DIR) + "/tests/mcp/fixtures";
  const std::string upstream = R"({"bytes":{"command":["/bin/sh",")" + fixtures +
                               R"(/not_utf8_upstream.sh"],"confinement":{"binds":[")" + fixtures +
                               R"("]}}})";
  McpProcess p({"--mcp-upstream", upstream, "--max-workers", "1"});
  p.send(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
  answer(p, 1);
  p.send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  // The answer used to be dropped as "not JSON-RPC", and the call waited for
  // the upstream timeout.
  p.send(call(2, "execute", R"j({"code":"async () => await codemode.bytes.raw({})"})j"));
  json::object code = answer(p, 2);
  EXPECT_FALSE(code.contains("isError")) << json::serialize(code);
  EXPECT_EQ(code.at("structuredContent").at("value"), "up \uFFFD here");
  p.send(R"({"jsonrpc":"2.0","id":3,"method":"ping"})");
  answer(p, 3);
  p.close_stdin();
  EXPECT_EQ(p.wait(), 0);
  EXPECT_NE(p.stderr_text().find("not UTF-8"), std::string::npos) << "the log says so";
}

using corral::mcp::testing::Fifo;

void open_session(McpProcess& p) {
  p.send(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
  answer(p, 1);
  p.send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
}

// A call running when the server stops gets an answer: a failed tool result
// (`unavailable`, retryable), before the process exits. It used to get none.
void expect_answered_at_stop(bool by_signal) {
  McpProcess p({"--mcp-manifest", kManifest, "--max-workers", "1"});
  open_session(p);
  Fifo fifo;
  p.send(call(7, "fixture_spawn", R"({"flags":{"pids":")" + fifo.path() + R"("}})"));
  ASSERT_EQ(fifo.pids().size(), 3u);  // the command is running
  if (by_signal) {
    p.signal(SIGTERM);
  } else {
    p.close_stdin();
  }
  json::object result = answer(p, 7);
  EXPECT_EQ(result.at("isError"), true) << json::serialize(result);
  const json::value failure =
      json::parse(result.at("content").as_array().at(0).at("text").as_string());
  EXPECT_EQ(failure.at("code").as_string(), "unavailable");
  EXPECT_EQ(failure.at("retryable"), true);
  EXPECT_NE(std::string(failure.at("message").as_string()).find(by_signal ? "signal" : "input"),
            std::string::npos)
      << json::serialize(failure);
  p.close_stdin();
  EXPECT_EQ(p.wait(), 0);
  EXPECT_EQ(p.rest_of_stdout(), "");  // one answer, not two
}

TEST(McpStdio, ACallInFlightIsAnsweredWhenStdinEnds) { expect_answered_at_stop(false); }

TEST(McpStdio, ACallInFlightIsAnsweredOnSigterm) { expect_answered_at_stop(true); }

// corral's death (SIGKILL: no cleanup of its own) takes a stdio upstream's
// whole tree with it, a grandchild that double-forked and called setsid
// included: the server's init dies with the thread that started it, and
// its pid namespace with it.
TEST(McpStdio, CorralsDeathKillsAnUpstreamsWholeTree) {
  corral::mcp::testing::WatchFifo fifo;
  const std::string fixtures = std::string(CORRAL_SOURCE_DIR) + "/tests/mcp/fixtures";
  const std::string upstream = R"({"confined":{"command":["/bin/bash",")" + fixtures +
                               R"(/confined_upstream.sh"],"env":{"set":{"PROBE_FIFO":")" +
                               fifo.path() + R"("}},"confinement":{"binds":[{"source":")" +
                               fixtures + R"("},{"source":")" + fifo.dir() +
                               R"(","writable":true}]}}})";
  McpProcess p({"--mcp-upstream", upstream, "--max-workers", "1"});
  open_session(p);
  p.send(call(2, "execute", R"js({"code":"async () => await codemode.confined.spawn({})"})js"));
  json::object spawned = answer(p, 2);
  EXPECT_FALSE(spawned.contains("isError")) << json::serialize(spawned);
  ASSERT_TRUE(fifo.ready()) << "the grandchild never opened the FIFO";
  p.signal(SIGKILL);
  p.wait();
  EXPECT_TRUE(fifo.writers_gone()) << "a process the upstream started outlived corral";
  // The dead corral's (empty) cgroup directories: what the next start's
  // sweep removes, done here so that the test leaves none.
  corral::process::sweep_stale_cgroups(true);
}

// JSON-RPC ids come back byte for byte: a number too long for a double, a
// string with escapes; and a call with a long id can be cancelled by it.
TEST(McpStdio, RequestIdsRoundTripByteExact) {
  McpProcess p({"--mcp-manifest", kManifest, "--max-workers", "1"});
  open_session(p);
  const std::string big = "123456789012345678901234567890";
  p.send(R"({"jsonrpc":"2.0","id":)" + big + R"(,"method":"ping"})");
  EXPECT_EQ(p.line(), R"({"jsonrpc":"2.0","id":)" + big + R"(,"result":{}})");
  p.send(R"({"jsonrpc":"2.0","id":-98765432109876543210987654321,"method":"nope"})");
  EXPECT_NE(p.line().find(R"("id":-98765432109876543210987654321,)"), std::string::npos);
  p.send(R"({"id" : "caf\u00e9 \/", "jsonrpc":"2.0","method":"ping"})");
  EXPECT_EQ(p.line(), R"({"jsonrpc":"2.0","id":"caf\u00e9 \/","result":{}})");
  // Not integers: refused as before, with a null id.
  p.send(R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})");
  EXPECT_NE(p.line().find(R"("id":null)"), std::string::npos);

  Fifo fifo;
  p.send(
      R"({"jsonrpc":"2.0","id":)" + big +
      R"(,"method":"tools/call","params":{"name":"fixture_spawn","arguments":{"flags":{"pids":")" +
      fifo.path() + R"("}}}})");
  ASSERT_EQ(fifo.pids().size(), 3u);
  p.send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":)" + big +
         "}}");
  // Cancelled: no answer to it; the next request is answered first.
  p.send(R"({"jsonrpc":"2.0","id":2,"method":"ping"})");
  EXPECT_EQ(p.line(), R"({"jsonrpc":"2.0","id":2,"result":{}})");
  p.close_stdin();
  EXPECT_EQ(p.wait(), 0);
  EXPECT_EQ(p.rest_of_stdout(), "");  // the cancelled call was not answered at the end either
}

}  // namespace
