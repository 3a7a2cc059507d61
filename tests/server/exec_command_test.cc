// `corral exec` end to end: the real binary against a real server, with the
// built-in echo tool, a manifest of bound commands, and the refusals.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>

#include "server/server_test_util.hpp"

namespace corral::server::testing {
namespace {

struct Result {
  int status = -1;
  std::string out;
};

Result shell(const std::string& command) {
  Result result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer{};
  while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) {
    result.out.append(buffer.data(), n);
  }
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

class ExecCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    Options options = test_options();
    options.identify = sync_identity([](const Handshake& handshake) {
      auto found = handshake.headers.find("authorization");
      if (found == handshake.headers.end() || found->second == "Bearer good") {
        return Decision::admit("caller");
      }
      return Decision::refuse("bad token");
    });
    server_ = std::make_unique<Server>(std::move(options));
    server_->listen();
    url_ = "ws://127.0.0.1:" + std::to_string(server_->address().port);
  }
  std::string exec(const std::string& args) {
    return std::string(CORRAL_BINARY) + " exec --server " + url_ + " " + args;
  }
  std::unique_ptr<Server> server_;
  std::string url_;
};

// The example docs/protocol.md shows, with the output it shows.
TEST_F(ExecCommand, RunsTheDocumentedExampleWithTheEchoTool) {
  Result r = shell(exec("--echo " CORRAL_SOURCE_DIR "/examples/exec_echo.js"));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out,
            "the caller answered {\"greeting\":\"hello\",\"n\":41}\n"
            "{\"greeting\":\"hello\",\"n\":42}\n");
}

TEST_F(ExecCommand, AnswersToolCallsFromAManifestOfBoundCommands) {
  char dir[] = "/tmp/corral-exec-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string manifest = std::string(dir) + "/say.yaml";
  std::ofstream(manifest) << "corral: 1\nname: say\nexecutable: /bin/echo\n"
                             "description: prints its arguments\n";
  Result r =
      shell("echo 'async () => (await codemode.say({args: [\"from\", \"echo\"]})).stdout' | " +
            exec("--manifest " + manifest + " -"));
  EXPECT_EQ(r.status, 0);
  // The binding ends options with `--`, which /bin/echo prints.
  EXPECT_EQ(r.out, "\"-- from echo\\n\"\n");
  std::remove(manifest.c_str());
  rmdir(dir);
}

TEST_F(ExecCommand, RubyFilesAndTheLanguageFlagRunRuby) {
  char dir[] = "/tmp/corral-exec-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string script = std::string(dir) + "/answer.rb";
  std::ofstream(script) << "puts 'asking'\nCodemode.echo(n: 41)['n'] + 1\n";
  Result file = shell(exec("--echo " + script));
  EXPECT_EQ(file.status, 0) << file.out;
  EXPECT_EQ(file.out, "asking\n42\n");
  Result flag = shell("echo '[1, 2].reduce(:+)' | " + exec("--language ruby -"));
  EXPECT_EQ(flag.status, 0) << flag.out;
  EXPECT_EQ(flag.out, "3\n");
  Result bad = shell("echo 1 | " + exec("--language cobol - 2>&1"));
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("language must be javascript, typescript or ruby"), std::string::npos) << bad.out;
  std::remove(script.c_str());
  rmdir(dir);
}

TEST_F(ExecCommand, FailuresExitOneWithTheCode) {
  Result timeout = shell("echo 'while (true) {}' | " + exec("--timeout 100ms - 2>&1"));
  EXPECT_EQ(timeout.status, 1);
  EXPECT_NE(timeout.out.find("corral: timeout: Execution timed out at its 100 ms bound."),
            std::string::npos)
      << timeout.out;
  Result json = shell("echo 'throw new Error(\"x\")' | " + exec("--json - 2>/dev/null"));
  EXPECT_EQ(json.status, 1);
  EXPECT_NE(json.out.find("\"code\":\"guest_error\""), std::string::npos) << json.out;
}

TEST_F(ExecCommand, RefusedConnectionsAreConnectionRejected) {
  Result refused = shell("echo 1 | " + exec("--token bad - 2>&1"));
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.out.find("corral: connection_rejected: Executor handshake failed for " + url_),
            std::string::npos)
      << refused.out;
  Result admitted = shell("echo 6*7 | " + exec("--token good - 2>&1"));
  EXPECT_EQ(admitted.status, 0);
  EXPECT_EQ(admitted.out, "42\n");
  Result bad = shell(exec("--timeout soon - < /dev/null 2>&1"));
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("invalid_request"), std::string::npos) << bad.out;
}

}  // namespace
}  // namespace corral::server::testing
