// tests/bind/cli_test.cc: the `corral tools` and `corral call` subcommands,
// driven through the real binary.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "core/json.hpp"
#include "core/utf8.hpp"
#include "corral/process.hpp"
#include "process/test_util.hpp"

namespace corral::bind {
namespace {

namespace json = core::json;

struct Ran {
  std::string out;
  std::string err;
  int exit_code;
};

Ran corral(std::vector<std::string> args) {
  process::Supervisor supervisor;
  args.insert(args.begin(), CORRAL_TEST_CLI);
  try {
    // corral itself runs on the host: it reads manifests from the source tree.
    Execution e = supervisor.run(process::Command{args, process::Hardening::host()});
    return {e.stdout_text(), e.stderr_text(), *e.exit_code()};
  } catch (const CommandError& e) {
    return {e.execution()->stdout_text(), e.execution()->stderr_text(),
            e.execution()->exit_code().value_or(-1)};
  }
}

const std::string kManifest = CORRAL_SOURCE_DIR "/examples/git.yaml";

TEST(CorralCli, ToolsPrintsOperationsAndSchemas) {
  Ran r = corral({"tools", "--manifest", kManifest});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = json::parse(r.out);
  auto& ops = out.at("operations").as_array();
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].at("name"), "git_version");
  EXPECT_EQ(ops[1].at("inputSchema").at("type"), "object");
  EXPECT_EQ(ops[1].at("outputSchema").at("required").as_array().size(), 4u);
}

TEST(CorralCli, ToolsShowsEachOperationsProfileAndProtections) {
  Ran r = corral({"tools", "--manifest", kManifest});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = json::parse(r.out);
  for (const auto& op : out.at("operations").as_array()) {
    const auto& profile = op.at("profile");
    EXPECT_EQ(profile.at("user"), "confined") << r.out;  // deny by default
    // The example's one choice: the host's root read-only, so a call can
    // hash files where corral runs.
    EXPECT_EQ(profile.at("filesystem"), "host_read_only");
    EXPECT_EQ(profile.at("network"), "none");
    EXPECT_EQ(profile.at("limits").at("processes"), 256);
    for (const auto& p : op.at("protections").as_array()) {
      EXPECT_TRUE(p.at("name").is_string());
      EXPECT_TRUE(p.at("enforced").is_bool());
      EXPECT_TRUE(p.at("detail").is_string());
    }
  }
}

TEST(CorralCli, CallPrintsTheEnvelopeWithTheViewAsValue) {
  Ran r = corral({"call", "--manifest", kManifest, "git_version", "{}"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto envelope = json::parse(r.out);
  EXPECT_EQ(envelope.at("ok"), true);
  const auto& execution = envelope.at("execution");
  EXPECT_EQ(execution.at("stdout").as_string().rfind("git version", 0), 0u);
  const auto& view = execution.at("value");
  EXPECT_EQ(view.at("exitCode"), 0);
  EXPECT_EQ(view.at("stdout"), execution.at("stdout"));
  EXPECT_EQ(view.at("truncated"), false);

  Ran plain = corral({"call", "--view", "--manifest", kManifest, "git_version", "{}"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(json::parse(plain.out).at("stdout"), execution.at("stdout"));
}

// The keys of every object in `v`, recursively, with their JSON kinds: the
// shape two envelopes must share.
std::string shape(const json::value& v) {
  if (v.is_object()) {
    std::map<std::string, std::string> sorted;
    for (const auto& [k, child] : v.as_object()) {
      // A value is any JSON: its shape is not the envelope's.
      sorted[std::string(k)] = k == "value" ? "any" : shape(child);
    }
    std::string out = "{";
    for (const auto& [k, s] : sorted) out += k + ":" + s + ",";
    return out + "}";
  }
  if (v.is_number()) return "number";
  return std::string(json::to_string(v.kind()));
}

TEST(CorralCli, CallPrintsTheSameEnvelopeAsRunJson) {
  const std::string script = ::testing::TempDir() + "corral_envelope.js";
  const std::string failing = ::testing::TempDir() + "corral_envelope_fail.js";
  {
    std::FILE* f = std::fopen(script.c_str(), "w");
    std::fputs("console.log('hi'); 1 + 1", f);
    std::fclose(f);
    f = std::fopen(failing.c_str(), "w");
    std::fputs("console.log('hi'); throw new Error('no')", f);
    std::fclose(f);
  }
  Ran run = corral({"run", "--json", script});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  Ran call = corral({"call", "--manifest", kManifest, "git_version", "{}"});
  ASSERT_EQ(call.exit_code, 0) << call.err;
  // A command's Execution adds its exit code (a guest's has none); the rest
  // is one shape.
  auto call_ok = json::parse(call.out);
  EXPECT_EQ(call_ok.at("execution").at("exit_code"), 0);
  call_ok.at("execution").as_object().erase("exit_code");
  EXPECT_EQ(shape(call_ok), shape(json::parse(run.out))) << run.out << call.out;

  Ran run_failed = corral({"run", "--json", failing});
  EXPECT_EQ(run_failed.exit_code, 1) << run_failed.err;
  Ran call_failed =
      corral({"call", "--manifest", kManifest, "git_hash-object", R"({"args":["/nope"]})"});
  EXPECT_EQ(call_failed.exit_code, 1);
  auto run_envelope = json::parse(run_failed.out);
  auto call_envelope = json::parse(call_failed.out);
  EXPECT_EQ(call_envelope.at("ok"), false);
  EXPECT_EQ(call_envelope.at("failure").at("code"), "command_failed");
  EXPECT_EQ(call_envelope.at("failure").at("execution").at("value").at("exitCode"), 128);
  EXPECT_EQ(call_envelope.at("failure").at("execution").at("exit_code"), 128);
  call_envelope.at("failure").at("execution").as_object().erase("exit_code");
  EXPECT_EQ(shape(call_envelope), shape(run_envelope)) << run_failed.out << call_failed.out;
  std::remove(script.c_str());
  std::remove(failing.c_str());
}

TEST(CorralCli, CallPrintsOutputThatIsNotUtf8AsReplacementCharacters) {
  const std::string manifest = CORRAL_SOURCE_DIR "/tests/mcp/fixtures/not_utf8.yaml";
  Ran r = corral({"call", "--view", "--manifest", manifest, "bytes_bad_byte", "{}"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(core::is_valid_utf8(r.out)) << r.out;
  auto view = json::parse(r.out);
  EXPECT_EQ(view.at("stdout").as_string(), "a\uFFFDb");
  EXPECT_EQ(view.at("stderr").as_string(), "\uFFFD");
  EXPECT_EQ(view.at("replaced"), true);

  // The 10-byte budget ends inside a euro sign: the cut falls before it.
  Ran cut = corral({"call", "--view", "--manifest", manifest, "bytes_cut_char", "{}"});
  ASSERT_EQ(cut.exit_code, 0) << cut.err;
  EXPECT_TRUE(core::is_valid_utf8(cut.out)) << cut.out;
  auto cut_view = json::parse(cut.out);
  EXPECT_EQ(cut_view.at("stdout").as_string(), "aaaaaaaa");
  EXPECT_EQ(cut_view.at("truncated"), true);
  EXPECT_FALSE(cut_view.as_object().contains("replaced"));
}

TEST(CorralCli, FailuresExitOneWithTheCode) {
  Ran bad = corral({"call", "--manifest", kManifest, "git_version", R"({"flags":{"nope":1}})"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("corral: invalid_request:"), std::string::npos) << bad.err;

  Ran failed =
      corral({"call", "--manifest", kManifest, "git_hash-object", R"({"args":["/nope"]})"});
  EXPECT_EQ(failed.exit_code, 1);
  EXPECT_NE(failed.err.find("corral: command_failed:"), std::string::npos) << failed.err;
  EXPECT_EQ(json::parse(failed.out).at("failure").at("execution").at("value").at("exitCode"), 128);

  Ran missing = corral({"tools", "--manifest", "/nonexistent.yaml"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("invalid_request"), std::string::npos) << missing.err;
}

TEST(CorralCli, AMissingExecutableIsSetupErrorNamingIt) {
  const std::string manifest = ::testing::TempDir() + "corral_missing_exe.yaml";
  {
    std::FILE* f = std::fopen(manifest.c_str(), "w");
    std::fputs("executable: /nonexistent/corral-tool\nname: gone\n", f);
    std::fclose(f);
  }
  Ran tools = corral({"tools", "--manifest", manifest});
  EXPECT_EQ(tools.exit_code, 1);
  EXPECT_NE(tools.err.find("corral: setup_error: executable:"), std::string::npos) << tools.err;
  EXPECT_NE(tools.err.find("/nonexistent/corral-tool"), std::string::npos) << tools.err;
  Ran call = corral({"call", "--manifest", manifest, "gone", "{}"});
  EXPECT_EQ(call.exit_code, 1);
  EXPECT_EQ(json::parse(call.out).at("failure").at("code"), "setup_error") << call.out;
  std::remove(manifest.c_str());
}

// The parent of a live `pid` (from /proc/PID/stat, after the parenthesised
// name, which may itself hold spaces and parentheses); nullopt once it is gone.
// A live `sleep` process descended from `ancestor`, if one is running.
std::optional<pid_t> sleeping_descendant(pid_t ancestor) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream comm(entry.path() / "comm");
    std::string command;
    if (!std::getline(comm, command) || command != "sleep") continue;
    const pid_t pid = std::stoi(name);
    for (std::optional<int> up = process::testing::parent_of(pid); up && *up > 1;
         up = process::testing::parent_of(*up)) {
      if (*up == ancestor) return pid;
    }
  }
  return std::nullopt;
}

TEST(CorralCli, SigtermCancelsARunningCallAndLeavesNothingBehind) {
  const std::string manifest = ::testing::TempDir() + "corral_sleep.yaml";
  {
    std::ofstream f(manifest);
    f << "corral: 1\nname: s\nexecutable: /bin/sleep\ncommands:\n  - name: \"30\"\n";
  }
  const process::testing::Piped corral = process::testing::spawn_piped(
      {CORRAL_TEST_CLI, "call", "--manifest", manifest, "s_30", "{}"});
  ASSERT_GT(corral.pid, 0);

  // The command runs once a sleep hangs below corral (in its unit).
  std::optional<pid_t> sleeper;
  ASSERT_TRUE(process::testing::eventually(
      [&] { return (sleeper = sleeping_descendant(corral.pid)).has_value(); },
      std::chrono::seconds(20)))
      << "the bound sleep never started";
  ASSERT_EQ(kill(corral.pid, SIGTERM), 0);

  const std::string printed = process::testing::read_all(corral.out);
  int status = 0;
  ASSERT_EQ(waitpid(corral.pid, &status, 0), corral.pid);
  // Cancelled, answered with the one envelope, and the sleep (30 s) is gone
  // with its unit: corral returns only after cleaning it up.
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
  EXPECT_EQ(json::parse(printed).at("failure").at("code"), "cancelled") << printed;
  EXPECT_FALSE(process::testing::alive(*sleeper)) << "sleep " << *sleeper << " outlived the call";
  std::remove(manifest.c_str());
}

// --timeout bounds the whole call: the 30 s sleep ends as `timeout` long
// before it would have finished, in the one failure envelope.
TEST(CorralCli, TimeoutEndsACallAsTimeout) {
  const std::string manifest = ::testing::TempDir() + "corral_sleep_timeout.yaml";
  {
    std::ofstream f(manifest);
    f << "corral: 1\nname: s\nexecutable: /bin/sleep\ncommands:\n  - name: \"30\"\n";
  }
  const auto started = std::chrono::steady_clock::now();
  Ran r = corral({"call", "--timeout", "300ms", "--manifest", manifest, "s_30", "{}"});
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(json::parse(r.out).at("failure").at("code"), "timeout") << r.out;
  EXPECT_NE(r.err.find("corral: timeout: "), std::string::npos) << r.err;
  EXPECT_LT(took, std::chrono::seconds(20));

  // A duration corral cannot take is refused before anything is bound.
  for (const char* bad : {"0", "abc", "1y"}) {
    Ran refused = corral({"call", "--timeout", bad, "--manifest", manifest, "s_30", "{}"});
    EXPECT_EQ(refused.exit_code, 2) << bad;
    EXPECT_NE(refused.err.find("corral: invalid_request: --timeout"), std::string::npos)
        << bad << ": " << refused.err;
    EXPECT_EQ(refused.out, "") << bad;
  }
  std::remove(manifest.c_str());
}

// `slots: 1` holds across processes: while one `corral call` runs, another
// of the same manifest fails busy at once, and succeeds once the first ends.
TEST(CorralCli, SlotsAreHeldAcrossCallProcesses) {
  char dir_template[] = "/tmp/corral-slots-test-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  ::chmod(dir.c_str(), 0755);  // the command runs as another uid
  const std::string ready = dir + "/ready", go = dir + "/go";
  ASSERT_EQ(::mkfifo(ready.c_str(), 0666), 0);
  ASSERT_EQ(::mkfifo(go.c_str(), 0666), 0);
  ::chmod(ready.c_str(), 0666);
  ::chmod(go.c_str(), 0666);
  const std::string manifest = dir + "/hold.yaml";
  std::ofstream(manifest) << "executable: /bin/sh\nname: hold\nsupervisor: {slots: 1}\n"
                          << "confinement: {binds: [\"" << dir << ":/w:rw\"]}\n"
                          << "separator: false\n"
                          << "fixed_args: [-c, 'if [ \"$1\" = wait ]; then echo up > /w/ready; "
                             "cat /w/go > /dev/null; fi; echo done', sh]\n";

  const pid_t first = ::fork();
  ASSERT_GE(first, 0);
  if (first == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execl(CORRAL_TEST_CLI, CORRAL_TEST_CLI, "call", "--manifest", manifest.c_str(), "hold",
            R"({"args":["wait"]})", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // The first call's command is running (it took the slot before it ran).
  const int ready_fd = ::open(ready.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(ready_fd, 0);
  pollfd wait_ready{ready_fd, POLLIN, 0};
  ASSERT_EQ(::poll(&wait_ready, 1, 60'000), 1) << "the first call never started its command";
  char up[8] = {};
  EXPECT_GT(::read(ready_fd, up, sizeof up), 0);
  ::close(ready_fd);

  Ran second = corral({"call", "--manifest", manifest, "hold", R"({"args":["quick"]})"});
  EXPECT_EQ(second.exit_code, 1) << second.out << second.err;
  EXPECT_NE(second.err.find("corral: busy: all 1 slots of this manifest are held"),
            std::string::npos)
      << second.err;
  EXPECT_NE(second.out.find(R"("code":"busy")"), std::string::npos) << second.out;

  // Let the first one finish; its slot is free again.
  const int go_fd = ::open(go.c_str(), O_WRONLY);
  ASSERT_GE(go_fd, 0);
  EXPECT_EQ(::write(go_fd, "x", 1), 1);
  ::close(go_fd);
  int status = 0;
  ASSERT_EQ(::waitpid(first, &status, 0), first);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  Ran third = corral({"call", "--view", "--manifest", manifest, "hold", R"({"args":["quick"]})"});
  EXPECT_EQ(third.exit_code, 0) << third.err;
  EXPECT_NE(third.out.find(R"("stdout":"done\n")"), std::string::npos) << third.out;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace corral::bind
