// bench/process_bench.cc: what a supervised, bound command costs over a raw
// posix_spawn + waitpid of the same program, per containment unit.
//
//   build/<dir>/bench/process_bench --benchmark_min_time=2
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "corral/bind.hpp"
#include "corral/process.hpp"

extern char** environ;

namespace {

using corral::process::UnitKind;

constexpr UnitKind kUnits[] = {UnitKind::cgroup, UnitKind::pid_namespace, UnitKind::process_group};

bool available(UnitKind unit) {
  static const auto units = corral::process::available_units();
  return std::find(units.begin(), units.end(), unit) != units.end();
}

// The floor: posix_spawn of /bin/true with stdio on /dev/null, then waitpid.
void BM_RawPosixSpawn(benchmark::State& state) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  char arg0[] = "/bin/true";
  char* argv[] = {arg0, nullptr};
  for (auto _ : state) {
    pid_t pid;
    if (posix_spawn(&pid, "/bin/true", &actions, nullptr, argv, environ) != 0) {
      state.SkipWithError("posix_spawn failed");
      break;
    }
    int status;
    waitpid(pid, &status, 0);
  }
  posix_spawn_file_actions_destroy(&actions);
}
BENCHMARK(BM_RawPosixSpawn)->UseRealTime();

// Raw again, but capturing stdout and stderr through pipes (what a fair
// hand-written runner does).
void BM_RawPosixSpawnWithPipes(benchmark::State& state) {
  char arg0[] = "/bin/true";
  char* argv[] = {arg0, nullptr};
  for (auto _ : state) {
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
      state.SkipWithError("pipe failed");
      break;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err[1], 2);
    pid_t pid;
    posix_spawn(&pid, "/bin/true", &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    close(err[1]);
    char buffer[4096];
    while (read(out[0], buffer, sizeof buffer) > 0) {
    }
    while (read(err[0], buffer, sizeof buffer) > 0) {
    }
    close(out[0]);
    close(err[0]);
    int status;
    waitpid(pid, &status, 0);
  }
}
BENCHMARK(BM_RawPosixSpawnWithPipes)->UseRealTime();

// Supervisor::run of /bin/true in each containment unit, host profile
// (Hardening::host(): no namespaces, no seccomp, no limits).
void BM_SupervisorRun(benchmark::State& state) {
  UnitKind unit = kUnits[state.range(0)];
  state.SetLabel(std::string(corral::process::to_string(unit)));
  if (!available(unit)) {
    state.SkipWithError("unit not available here");
    return;
  }
  corral::process::SupervisorOptions options;
  options.unit = unit;
  corral::process::Supervisor supervisor(options);
  corral::process::Command command{{"/bin/true"}, corral::process::Hardening::host()};
  for (auto _ : state) benchmark::DoNotOptimize(supervisor.run(command));
}
BENCHMARK(BM_SupervisorRun)->DenseRange(0, 2)->UseRealTime();

// The host profile plus the default process limit (a cgroup pids leaf per
// run): what the limits alone cost.
void BM_SupervisorRunHostWithPidsLimit(benchmark::State& state) {
  corral::process::Supervisor supervisor;
  corral::process::Command command{{"/bin/true"}, corral::process::Hardening::host()};
  command.hardening.confinement.limits.processes = 256;
  for (auto _ : state) benchmark::DoNotOptimize(supervisor.run(command));
}
BENCHMARK(BM_SupervisorRunHostWithPidsLimit)->UseRealTime();

// The default, fully confined profile (user, pid, mount, net, ipc, uts,
// cgroup namespaces, seccomp, minimal filesystem, pids.max 256).
// Runs `command` each iteration; a start this host refuses skips the
// benchmark with the reason instead of aborting the binary.
void run_each_iteration(benchmark::State& state, const corral::process::Command& command) {
  corral::process::Supervisor supervisor;
  for (auto _ : state) {
    try {
      benchmark::DoNotOptimize(supervisor.run(command));
    } catch (const std::exception& e) {
      state.SkipWithError(e.what());
      break;
    }
  }
}

void BM_SupervisorRunConfined(benchmark::State& state) {
  run_each_iteration(state, corral::process::Command{{"/bin/true"}, {}});
}
BENCHMARK(BM_SupervisorRunConfined)->UseRealTime();

// The default profile with one part turned off: what each part costs.
void BM_SupervisorRunConfinedWithout(benchmark::State& state) {
  corral::process::Command command{{"/bin/true"}, {}};
  corral::process::Confinement& c = command.hardening.confinement;
  switch (state.range(0)) {
    case 0:
      state.SetLabel("network namespace");
      c.network = true;
      break;
    case 1:
      state.SetLabel("filesystem view");
      c.filesystem = corral::process::FilesystemView::host;
      break;
    case 2:
      state.SetLabel("pid namespace");
      c.pid_namespace = false;
      break;
    case 3:
      state.SetLabel("seccomp");
      c.seccomp = false;
      break;
    case 4:
      state.SetLabel("limits");
      c.limits = {};
      c.limits.processes = std::nullopt;
      break;
  }
  run_each_iteration(state, command);
}
BENCHMARK(BM_SupervisorRunConfinedWithout)->DenseRange(0, 4)->UseRealTime();

// A bound operation (input JSON -> argv -> Supervisor -> output view) of
// /bin/true, in each unit: the number to compare with BM_RawPosixSpawn.
void BM_BoundCall(benchmark::State& state) {
  UnitKind unit = kUnits[state.range(0)];
  state.SetLabel(std::string(corral::process::to_string(unit)));
  if (!available(unit)) {
    state.SkipWithError("unit not available here");
    return;
  }
  corral::bind::CommandTree tree;
  tree.executable = "/bin/true";
  tree.root.name = "true";
  tree.supervisor.unit = unit;
  auto binding = corral::bind::Binding::bind(std::move(tree));
  for (auto _ : state) benchmark::DoNotOptimize(binding->call("true", R"({"args":["x"]})"));
}
BENCHMARK(BM_BoundCall)->DenseRange(0, 2)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
