// Worker-pool benchmarks: what running through hardened `corral worker`
// processes costs over an in-process sandbox, how throughput scales with
// workers, and what an idle worker holds in memory.
//
//   build/test/bench/pool_bench --benchmark_repetitions=3
//       --benchmark_report_aggregates_only=true
//
// Every execution benchmark runs the standard workloads
// (../shared/bench/workloads.json). Latency benchmarks report p50/p99 of
// single executions as counters (microseconds), besides the mean.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "corral/pool.hpp"
#include "corral/sandbox.hpp"
#include "workloads.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace corral;

using bench::load_workloads;
using bench::Workload;

pool::Options pool_options(std::size_t workers) {
  pool::Options options;
  options.worker_command = {CORRAL_BINARY, "worker"};
  options.max_workers = workers;
  options.retire_after_executions = 1'000'000;
  return options;
}

pool::Request request_for(const Workload& workload) {
  pool::Request request;
  request.code = workload.source;
  request.tools = {"echo"};
  request.dispatcher = [](const std::string&, std::string args, pool::ToolAnswer answer) {
    answer.resolve(std::move(args));
  };
  return request;
}

void set_percentiles(benchmark::State& state, std::vector<double>& micros) {
  if (micros.empty()) return;
  std::sort(micros.begin(), micros.end());
  state.counters["p50_us"] = micros[micros.size() / 2];
  state.counters["p99_us"] = micros[std::min(micros.size() - 1, micros.size() * 99 / 100)];
}

// The floor: the same workload in an in-process Sandbox (reused, a fresh
// context per run), with the same echo tool.
void BM_InProcess(benchmark::State& state, const Workload& workload) {
  sandbox::Sandbox sandbox;
  sandbox.bind_async("codemode.echo", [](std::string args, sandbox::ToolReply reply) {
    reply.resolve(std::move(args));
  });
  std::vector<double> micros;
  for (auto _ : state) {
    const auto start = Clock::now();
    Execution e = sandbox.execute(workload.source);
    micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    if (e.value() != workload.expect) state.SkipWithError("unexpected value");
  }
  set_percentiles(state, micros);
}

// One execution at a time through a pool of one worker: the pool's added
// latency is this minus BM_InProcess.
void BM_PoolLatency(benchmark::State& state, const Workload& workload) {
  pool::WorkerPool pool(pool_options(1));
  pool.execute(request_for(workload));  // spawn and warm the worker
  std::vector<double> micros;
  for (auto _ : state) {
    const auto start = Clock::now();
    pool::Outcome outcome = pool.execute(request_for(workload));
    micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    if (!outcome.ok() || outcome.execution->value() != workload.expect)
      state.SkipWithError("unexpected outcome");
  }
  set_percentiles(state, micros);
}

// Throughput: `workers` workers kept busy by 2 * workers executions in
// flight; one iteration is one batch of 200 executions.
void BM_PoolThroughput(benchmark::State& state, const Workload& workload) {
  const auto workers = static_cast<std::size_t>(state.range(0));
  pool::WorkerPool pool(pool_options(workers));
  constexpr int kBatch = 200;
  const std::size_t window = 2 * workers;
  std::mutex mutex;
  std::condition_variable settled;
  std::size_t in_flight = 0;
  int failures = 0;
  auto run_batch = [&] {
    for (int i = 0; i < kBatch; ++i) {
      {
        std::unique_lock lock(mutex);
        settled.wait(lock, [&] { return in_flight < window; });
        ++in_flight;
      }
      pool.submit(request_for(workload), [&](pool::Outcome outcome) {
        std::lock_guard lock(mutex);
        if (!outcome.ok()) ++failures;
        --in_flight;
        settled.notify_all();
      });
    }
    std::unique_lock lock(mutex);
    settled.wait(lock, [&] { return in_flight == 0; });
  };
  run_batch();  // spawn and warm every worker
  for (auto _ : state) run_batch();
  if (failures) state.SkipWithError("executions failed");
  state.SetItemsProcessed(state.iterations() * kBatch);
}

// Memory of an idle worker after it served one execution of each workload.
// Where the kernel allows a pid namespace the worker is two processes (a
// small reaper and the worker proper); both are counted. RSS counts shared
// library pages in each process; PSS divides them among their sharers.
std::pair<double, double> rss_and_pss_bytes(const std::string& pid) {
  std::ifstream rollup("/proc/" + pid + "/smaps_rollup");
  std::string key;
  double kib = 0, rss = 0, pss = 0;
  std::string unit;
  while (rollup >> key) {
    if (key == "Rss:" && rollup >> kib >> unit)
      rss = kib * 1024;
    else if (key == "Pss:" && rollup >> kib >> unit)
      pss = kib * 1024;
  }
  return {rss, pss};
}

void BM_IdleWorkerMemory(benchmark::State& state) {
  pool::WorkerPool pool(pool_options(1));
  int pid = 0;
  pool.subscribe([&](const pool::Event& event) {
    if (event.kind == pool::Event::Kind::worker_started) pid = event.pid;
  });
  for (const Workload& workload : load_workloads()) pool.execute(request_for(workload));
  std::pair<double, double> spawned, child{0, 0};
  for (auto _ : state) {
    const std::string p = std::to_string(pid);
    spawned = rss_and_pss_bytes(p);
    std::ifstream children("/proc/" + p + "/task/" + p + "/children");
    std::string c;
    if (children >> c) child = rss_and_pss_bytes(c);
  }
  constexpr double MiB = 1 << 20;
  state.counters["rss_MiB"] = (spawned.first + child.first) / MiB;
  state.counters["pss_MiB"] = (spawned.second + child.second) / MiB;
  state.counters["reaper_rss_MiB"] = child.first > 0 ? spawned.first / MiB : 0;
}
BENCHMARK(BM_IdleWorkerMemory)->Iterations(1);

void register_all() {
  for (const Workload& workload : load_workloads()) {
    benchmark::RegisterBenchmark(("BM_InProcess/" + workload.name).c_str(), BM_InProcess, workload)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("BM_PoolLatency/" + workload.name).c_str(), BM_PoolLatency,
                                 workload)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("BM_PoolThroughput/" + workload.name).c_str(), BM_PoolThroughput,
                                 workload)
        ->Arg(1)
        ->Arg(2)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
