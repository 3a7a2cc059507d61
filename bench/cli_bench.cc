// bench/cli_bench.cc: what starting a corral command costs as a process, next
// to a bare posix_spawn + waitpid of /bin/true, side by side in one run.
//
// bin/corral links no engine (apps/corral/cli.hpp); corral-engine does, and
// `corral-engine --version` shows what loading libnode costs a process that
// does nothing else. `call` runs a bound /bin/true through the supervisor
// (confined: namespaces, cgroup or process group, rlimits), so it is the
// whole cost of a bound call from a shell.
//
//   build/release/bench/cli_bench --benchmark_repetitions=5
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

extern char** environ;

namespace {

std::string& manifest_path() {
  static std::string path;
  return path;
}

std::string& script_path() {
  static std::string path;
  return path;
}

// Starts argv with stdin and stderr on /dev/null, stdout on `stdout_fd` (or
// /dev/null when -1); its pid, or -1.
pid_t spawn(const std::vector<std::string>& args, int stdout_fd = -1) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (stdout_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, stdout_fd, 1);
  } else {
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  }
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

// Runs argv with stdio on /dev/null; false if it did not exit `expected`.
bool spawn_and_wait(const std::vector<std::string>& args, int expected) {
  const pid_t pid = spawn(args);
  if (pid < 0) return false;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == expected;
}

void run(benchmark::State& state, const std::vector<std::string>& args, int expected) {
  for (auto _ : state) {
    if (!spawn_and_wait(args, expected)) {
      state.SkipWithError("the command did not exit as expected");
      return;
    }
  }
}

void BM_RawPosixSpawnTrue(benchmark::State& state) { run(state, {"/bin/true"}, 0); }
BENCHMARK(BM_RawPosixSpawnTrue)->UseRealTime();

void BM_FrontVersion(benchmark::State& state) { run(state, {CORRAL_BINARY, "--version"}, 0); }
BENCHMARK(BM_FrontVersion)->UseRealTime();

void BM_EngineVersion(benchmark::State& state) {
  run(state, {CORRAL_ENGINE_BINARY, "--version"}, 0);
}
BENCHMARK(BM_EngineVersion)->UseRealTime();

void BM_FrontTools(benchmark::State& state) {
  run(state, {CORRAL_BINARY, "tools", "--manifest", manifest_path()}, 0);
}
BENCHMARK(BM_FrontTools)->UseRealTime();

void BM_FrontCallTrue(benchmark::State& state) {
  run(state, {CORRAL_BINARY, "call", "--manifest", manifest_path(), "t_true", "{}"}, 0);
}
BENCHMARK(BM_FrontCallTrue)->UseRealTime();

// Nothing listens on port 1: the cost of starting, reading the
// environment and being refused.
void BM_FrontStatusRefused(benchmark::State& state) {
  run(state, {CORRAL_BINARY, "status", "--admin-port", "1"}, 1);
}
BENCHMARK(BM_FrontStatusRefused)->UseRealTime();

// A field of /proc/PID/status in kB ("VmRSS:  8552 kB"), 0 when missing.
double status_kib(pid_t pid, const std::string& field) {
  FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/status").c_str(), "r");
  if (!f) return 0;
  char line[256];
  double value = 0;
  while (std::fgets(line, sizeof line, f)) {
    if (std::string(line).rfind(field + ":", 0) == 0) value = std::atof(line + field.size() + 1);
  }
  std::fclose(f);
  return value;
}

// The daemon's own memory (`corral serve`, workers apart): right after it
// serves, and after one execution has gone through a worker. The front
// links no engine, so this is a process without libnode.
void BM_DaemonMemory(benchmark::State& state) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return state.SkipWithError("pipe");
  const pid_t pid = spawn({CORRAL_BINARY, "serve", "--port", "0", "--no-admin"}, out[1]);
  close(out[1]);
  if (pid < 0) return state.SkipWithError("posix_spawn corral serve");
  std::string banner;
  char c;
  while (banner.find("/ (probes") == std::string::npos && read(out[0], &c, 1) == 1) banner += c;
  const std::size_t at = banner.find("ws://");
  const std::size_t end = banner.find("/ (probes");
  double idle = 0, after_run = 0, file = 0;
  for (auto _ : state) {
    idle = status_kib(pid, "VmRSS");
    if (at == std::string::npos || end == std::string::npos ||
        !spawn_and_wait(
            {CORRAL_BINARY, "exec", "--server", banner.substr(at, end + 1 - at), script_path()},
            0)) {
      state.SkipWithError("corral exec through the daemon failed");
      break;
    }
    after_run = status_kib(pid, "VmRSS");
    file = status_kib(pid, "RssFile");
  }
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
  close(out[0]);
  state.counters["rss_MiB"] = after_run / 1024;
  state.counters["idle_rss_MiB"] = idle / 1024;
  state.counters["file_rss_MiB"] = file / 1024;
}
BENCHMARK(BM_DaemonMemory)->Iterations(1)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  char dir[] = "/tmp/corral-cli-bench-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  manifest_path() = std::string(dir) + "/true.yaml";
  if (FILE* f = std::fopen(manifest_path().c_str(), "w")) {
    std::fputs("corral: 1\nname: t\nexecutable: /bin/true\ncommands:\n  - name: \"true\"\n", f);
    std::fclose(f);
  }
  script_path() = std::string(dir) + "/run.js";
  if (FILE* f = std::fopen(script_path().c_str(), "w")) {
    std::fputs("console.log('hi'); 6 * 7\n", f);
    std::fclose(f);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::remove(manifest_path().c_str());
  std::remove(script_path().c_str());
  ::rmdir(dir);
  return 0;
}
