// The `corral` command line as a Unix tool: exit statuses, usage errors,
// --help, warnings about the environment. The real binary, real pipes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "process/test_util.hpp"

namespace {

const std::string kCorral = CORRAL_BINARY;

struct Ran {
  int status = -1;
  std::string out;
  std::string err;
};

std::string temp_file(const std::string& content) {
  char path[] = "/tmp/corral-cli-test-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return "/dev/null";
  close(fd);
  std::ofstream(path) << content;
  return path;
}

// Runs `args` (sh words after the binary) with `env` before it and `input`
// on stdin; stdout and stderr apart.
Ran corral(const std::string& args, const std::string& env = "", const std::string& input = "") {
  const std::string in_path = temp_file(input);
  const std::string err_path = temp_file("");
  const std::string command = env + " " + kCorral + " " + args + " <" + in_path + " 2>" + err_path;
  Ran ran;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return ran;
  std::array<char, 4096> buffer{};
  while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe))
    ran.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  ran.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_path);
  std::stringstream text;
  text << in.rdbuf();
  ran.err = text.str();
  std::remove(err_path.c_str());
  std::remove(in_path.c_str());
  return ran;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Cli, EveryCommandLineErrorIsAUsageErrorWithTheUsageLine) {
  // Unknown flags, missing values, missing and extra arguments, values of
  // the wrong type, on every command: CLI11's own codes (105, 106, 109, ...)
  // are none of corral's statuses.
  struct Case {
    std::string args;
    std::string usage;  // the usage line printed
    std::string what;   // part of the message
  };
  const Case cases[] = {
      {"", "Usage: corral [OPTIONS] SUBCOMMAND", "A subcommand is required"},
      {"nosuch", "Usage: corral [OPTIONS] SUBCOMMAND", "nosuch is not a command; the commands are"},
      {"--bogus", "Usage: corral [OPTIONS] SUBCOMMAND", "--bogus is not an option of corral"},
      {"run", "Usage: corral run [OPTIONS] file", "file is required"},
      {"run --bogus x.js", "Usage: corral run", "--bogus"},
      {"run x.js --timeout", "Usage: corral run", "--timeout"},
      {"exec x.js", "Usage: corral exec", "--server is required"},
      {"exec --server", "Usage: corral exec", "--server"},
      {"serve --bogus", "Usage: corral serve [OPTIONS]", "--bogus"},
      {"serve extra", "Usage: corral serve [OPTIONS]", "extra"},
      {"serve --port", "Usage: corral serve [OPTIONS]", "--port"},
      {"serve --no-metrics=false", "Usage: corral serve [OPTIONS]", "no-metrics"},
      {"check --bogus", "Usage: corral check [OPTIONS]", "--bogus"},
      {"mcp --bogus", "Usage: corral mcp [OPTIONS]", "--bogus"},
      {"status --admin-port x", "Usage: corral status [OPTIONS]", "--admin-port"},
      {"status --admin-port 99999", "Usage: corral status [OPTIONS]", "--admin-port"},
      {"maintenance sideways", "Usage: corral maintenance [OPTIONS] [mode]", "sideways"},
      {"tools", "Usage: corral tools [OPTIONS]", "--manifest is required"},
      {"call --manifest x.yaml", "Usage: corral call [OPTIONS] name [input]", "name is required"},
      {"worker --ipc-fd x", "Usage: corral worker [OPTIONS]", "--ipc-fd"},
  };
  for (const Case& c : cases) {
    const Ran r = corral(c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, c.usage)) << c.args << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, c.what)) << c.args << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, "--help` for more.")) << c.args << "\n" << r.err;
    EXPECT_EQ(r.out, "") << c.args << ": a usage error writes to stderr only";
  }
}

TEST(Cli, HelpAndVersionGoToStdoutAndExitZero) {
  const Ran help = corral("--help");
  EXPECT_EQ(help.status, 0);
  EXPECT_EQ(help.err, "");
  EXPECT_TRUE(contains(help.out, "Usage: corral [OPTIONS] SUBCOMMAND")) << help.out;
  const Ran version = corral("--version");
  EXPECT_EQ(version.status, 0);
  EXPECT_TRUE(contains(version.out, "corral 0.1.0")) << version.out;
}

TEST(Cli, HelpDocumentsTheExitStatusesOnEveryCommand) {
  for (const char* command :
       {"", "run", "exec", "serve", "check", "status", "maintenance", "tools", "call", "mcp"}) {
    const Ran r = corral(std::string(command) + " --help");
    EXPECT_EQ(r.status, 0) << command;
    EXPECT_TRUE(contains(r.out, "Exit status:\n  0  success\n  1  the run, call or request failed"))
        << command << "\n"
        << r.out;
    EXPECT_TRUE(contains(r.out, "  2  bad invocation: the command line was not understood"))
        << command;
    EXPECT_TRUE(contains(r.out, "  5  this machine cannot run sandboxed code (check)\n"))
        << command;
  }
}

TEST(Cli, HelpShowsTypesNotText) {
  const Ran serve = corral("serve --help");
  for (const char* shown : {"--timeout DURATION", "--memory-limit SIZE", "--max-workers INT",
                            "--metrics [BOOL]", "--no-metrics", "--admin-port PORT"})
    EXPECT_TRUE(contains(serve.out, shown)) << shown << "\n" << serve.out;
  const Ran run = corral("run --help");
  for (const char* shown : {"--timeout DURATION=60s", "--memory-limit SIZE=64MiB",
                            "--stdout-limit SIZE", "--language javascript|typescript|ruby"})
    EXPECT_TRUE(contains(run.out, shown)) << shown << "\n" << run.out;
  const Ran status = corral("status --help");
  EXPECT_TRUE(contains(status.out, "--admin-port PORT")) << status.out;
  EXPECT_TRUE(contains(status.out, "--json")) << status.out;
  for (const char* command : {"serve", "run", "status", "exec", "call", "check", "mcp"}) {
    const Ran r = corral(std::string(command) + " --help");
    EXPECT_FALSE(contains(r.out, "TEXT")) << r.out;
  }
}

TEST(Cli, RefusedSettingValuesExitOneNamingBothSpellings) {
  const Ran r =
      corral("check --memory-limit 64parsecs --no-metrics --metrics false", "CORRAL_TIMEOUT=1e10");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "corral: --timeout or CORRAL_TIMEOUT: \"1e10\" is too long"))
      << r.err;
  EXPECT_TRUE(contains(r.err,
                       "corral: --memory-limit or CORRAL_MEMORY_LIMIT: \"parsecs\" is not a "
                       "size unit; a size is a number of bytes"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "give --metrics or --no-metrics, not both")) << r.err;
}

TEST(Cli, AVariableThatNamesNoSettingIsReportedWithTheClosest) {
  // Refused settings stop check before it starts a worker: the warning is
  // printed with the errors.
  const Ran r = corral("check --max-queue 0",
                       "CORRAL_MAX_WORKER=1 CORRAL_BINARY=x CORRAL_TEST_SERVER=y CORRAL_PORT=9");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err,
                       "corral: warning: CORRAL_MAX_WORKER names no setting; it is ignored "
                       "(did you mean CORRAL_MAX_WORKERS?)\n"))
      << r.err;
  // The test tools' variables and real settings are not warned about.
  EXPECT_FALSE(contains(r.err, "CORRAL_BINARY")) << r.err;
  EXPECT_FALSE(contains(r.err, "CORRAL_TEST_SERVER")) << r.err;
  EXPECT_FALSE(contains(r.err, "CORRAL_PORT")) << r.err;
  // status reads the environment too (CORRAL_ADMIN_PORT).
  const Ran status = corral("status --admin-port 1", "CORRAL_ADMIN_PROT=1");
  EXPECT_EQ(status.status, 1);
  EXPECT_TRUE(contains(status.err,
                       "CORRAL_ADMIN_PROT names no setting; it is ignored (did you "
                       "mean CORRAL_ADMIN_PORT?)"))
      << status.err;
}

// A .ts file is TypeScript (types erased); --language says so for stdin.
TEST(Cli, RunTakesTypeScriptByExtensionOrFlag) {
  const std::string plain = temp_file("const n: number = 20 + 1 as number;\nn * 2");
  const std::string file = plain + ".ts";
  ASSERT_EQ(std::rename(plain.c_str(), file.c_str()), 0);
  const Ran by_extension = corral("run " + file);
  std::remove(file.c_str());
  EXPECT_EQ(by_extension.status, 0) << by_extension.err;
  EXPECT_EQ(by_extension.out, "42\n");
  const Ran by_flag = corral("run --language typescript -", "", "let s: string = 'ok'; s");
  EXPECT_EQ(by_flag.status, 0) << by_flag.err;
  EXPECT_EQ(by_flag.out, "\"ok\"\n");
  const Ran refused = corral("run --language typescript -", "", "enum E { A }\nE.A");
  EXPECT_NE(refused.status, 0);
  EXPECT_TRUE(contains(refused.err, "compile_error")) << refused.err;
  EXPECT_TRUE(contains(refused.err, "TypeScript: enum")) << refused.err;
}

TEST(Cli, RunRefusesSizesAndDurationsItCannotHold) {
  for (const char* flags :
       {"--timeout 1e10", "--timeout 99999999999999999999h",
        "--memory-limit 99999999999999999999GiB", "--memory-limit -64MiB", "--memory-limit ''",
        "--stdout-limit \"$(printf '12\\377')\"", "--stderr-limit 1.8e19"}) {
    const Ran r = corral(std::string("run ") + flags + " -", "", "1");
    EXPECT_EQ(r.status, 2) << flags << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, "corral: invalid_request: --")) << flags << "\n" << r.err;
  }
  const Ran mib = corral("run --memory-limit 64m -", "", "1");
  EXPECT_EQ(mib.status, 0) << mib.err;
  EXPECT_EQ(mib.out, "1\n");
}

TEST(Cli, JsonNumbersPrintAsNumbers) {
  const Ran r = corral("run --json -", "", "[0.1, 2.5, 3, 1e21, -0.000001]");
  EXPECT_EQ(r.status, 0) << r.err;
  // The value as JavaScript's JSON.stringify wrote it (carried as text).
  EXPECT_TRUE(contains(r.out, R"("value":[0.1,2.5,3,1e+21,-0.000001])")) << r.out;
  // Boost.JSON's own writer would print wall_time as 1.2345E-3.
  EXPECT_FALSE(contains(r.out, "E-")) << r.out;
  EXPECT_FALSE(contains(r.out, "E0")) << r.out;
  EXPECT_TRUE(contains(r.out, R"("wall_time":0.)")) << r.out;
}

std::string read_link(const std::string& path) {
  char target[4096] = {};
  const ssize_t n = readlink(path.c_str(), target, sizeof target - 1);
  return n > 0 ? std::string(target, static_cast<std::size_t>(n)) : std::string();
}

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string whole_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The live pids whose parent is `parent`.
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    if (corral::process::testing::parent_of(pid) == parent) out.push_back(pid);
  }
  return out;
}

// bin/corral hands `run` to corral-engine by exec: the same pid, and a
// process that still calls itself corral (ps, pgrep -x corral, pkill),
// whose executable is the engine.
TEST(Cli, RunIsHandedToTheEngineKeepingThePidAndTheName) {
  int in[2];
  ASSERT_EQ(pipe2(in, O_CLOEXEC), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  const char* argv[] = {kCorral.c_str(), "run", "-", nullptr};
  pid_t pid = 0;
  ASSERT_EQ(
      posix_spawn(&pid, kCorral.c_str(), &actions, nullptr, const_cast<char**>(argv), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  // The engine reads the script from stdin, which stays open: the exec,
  // then the engine naming itself as its main() starts, are the only
  // changes /proc shows until then.
  const std::string proc = "/proc/" + std::to_string(pid);
  std::string exe, name;
  corral::process::testing::eventually(
      [&] {
        exe = read_link(proc + "/exe");
        name = first_line(proc + "/comm");
        return contains(exe, "corral-engine") && name == "corral";
      },
      std::chrono::seconds(20));
  EXPECT_TRUE(contains(exe, "corral-engine")) << exe;
  EXPECT_EQ(name, "corral");
  ASSERT_EQ(write(in[1], "1 + 1", 5), 5);
  close(in[1]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

// The daemon is the front itself: the process that faces the network maps
// no V8 (nor the ICU and OpenSSL libnode brings). Its guests run in workers,
// which are corral-engine, still named corral.
TEST(Cli, TheDaemonMapsNoEngineAndItsWorkersAreTheEngine) {
  const corral::process::testing::Piped daemon =
      corral::process::testing::spawn_piped({kCorral, "serve", "--port", "0", "--no-admin"});
  const pid_t pid = daemon.pid;
  ASSERT_GT(pid, 0);
  std::string banner;
  char c;
  while (banner.find("/ (probes") == std::string::npos && read(daemon.out, &c, 1) == 1) banner += c;
  ASSERT_TRUE(contains(banner, "corral serve: executor on ws://")) << banner;
  const std::size_t at = banner.find("ws://");
  const std::string url = banner.substr(at, banner.find("/ (probes") + 1 - at);
  // One execution through the executor, so a worker has run a guest.
  const Ran ran = corral("exec --server " + url + " -", "", "6 * 7");
  EXPECT_EQ(ran.status, 0) << ran.err;
  EXPECT_TRUE(contains(ran.out, "42")) << ran.out;

  const std::string proc = "/proc/" + std::to_string(pid);
  EXPECT_EQ(read_link(proc + "/exe"), kCorral);
  EXPECT_EQ(first_line(proc + "/comm"), "corral");
  const std::string maps = whole_file(proc + "/maps");
  EXPECT_FALSE(contains(maps, "libnode")) << maps;
  EXPECT_FALSE(contains(maps, "libcrypto")) << maps;
  int engines = 0;
  for (pid_t child : children_of(pid)) {
    const std::string child_proc = "/proc/" + std::to_string(child);
    if (!contains(read_link(child_proc + "/exe"), "corral-engine")) continue;
    ++engines;
    EXPECT_EQ(first_line(child_proc + "/comm"), "corral");
    EXPECT_TRUE(contains(whole_file(child_proc + "/maps"), "libnode"));
  }
  EXPECT_GE(engines, 1);
  kill(pid, SIGTERM);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  close(daemon.out);
}

}  // namespace
