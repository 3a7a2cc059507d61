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
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/socket.h>
#include <unistd.h>

#include "core/json.hpp"
#include "corral/pool.hpp"
#include "corral/sandbox.hpp"
#include "workloads.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace corral;

using bench::load_workloads;
using bench::unique_source;
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
  request.code = unique_source(workload.source);
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
    Execution e = sandbox.execute(unique_source(workload.source));
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
    if (!outcome.ok() || outcome.execution().value() != workload.expect)
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
// Where the kernel allows a pid namespace the worker is two processes: the
// reaper (the process the pool started, which forked the worker into the
// namespace and waits) and the worker proper. RSS counts a shared page in
// each process that maps it, and the reaper shares nearly all of its pages
// with the worker (the libraries both loaded before the fork), so the sum
// of the two RSS counts most pages twice. rss_MiB is what the pair holds
// resident: the worker's RSS plus the pages only the reaper maps.
struct Footprint {
  double rss = 0, pss = 0, private_bytes = 0;
};

Footprint footprint_of(const std::string& pid) {
  std::ifstream rollup("/proc/" + pid + "/smaps_rollup");
  std::string key;
  double kib = 0;
  std::string unit;
  Footprint out;
  while (rollup >> key) {
    if (key == "Rss:" && rollup >> kib >> unit)
      out.rss = kib * 1024;
    else if (key == "Pss:" && rollup >> kib >> unit)
      out.pss = kib * 1024;
    else if ((key == "Private_Clean:" || key == "Private_Dirty:") && rollup >> kib >> unit)
      out.private_bytes += kib * 1024;
  }
  return out;
}

void BM_IdleWorkerMemory(benchmark::State& state) {
  pool::WorkerPool pool(pool_options(1));
  int pid = 0;
  pool.subscribe([&](const pool::Event& event) {
    if (event.kind == pool::Event::Kind::worker_started) pid = event.pid;
  });
  for (const Workload& workload : load_workloads()) pool.execute(request_for(workload));
  Footprint spawned, child;
  for (auto _ : state) {
    const std::string p = std::to_string(pid);
    spawned = footprint_of(p);
    std::ifstream children("/proc/" + p + "/task/" + p + "/children");
    std::string c;
    if (children >> c) child = footprint_of(c);
  }
  constexpr double MiB = 1 << 20;
  const bool reaped = child.rss > 0;  // else the spawned process is the worker
  const Footprint& worker = reaped ? child : spawned;
  const double reaper_only = reaped ? spawned.private_bytes : 0;
  state.counters["rss_MiB"] = (worker.rss + reaper_only) / MiB;
  state.counters["worker_rss_MiB"] = worker.rss / MiB;
  state.counters["pss_MiB"] = (spawned.pss + child.pss) / MiB;
  state.counters["reaper_rss_MiB"] = reaped ? spawned.rss / MiB : 0;
  state.counters["reaper_private_MiB"] = reaper_only / MiB;
  state.counters["rss_sum_MiB"] = (spawned.rss + child.rss) / MiB;
}
BENCHMARK(BM_IdleWorkerMemory)->Iterations(1);

// The machine's price of one thread hand-off: two threads bouncing a byte
// over a Unix socketpair, blocking in read() as the pool's and the
// worker's threads block in epoll or a condition variable. A tool call
// over the bridge crosses seven such hand-offs (worker runner -> pool thread
// -> server io thread -> caller -> io thread -> pool thread -> worker main
// thread -> runner), so this bounds what the bridge can reach on this
// machine; `handoff_us` is half a round trip.
void BM_ThreadHandOff(benchmark::State& state) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0) {
    state.SkipWithError("socketpair failed");
    return;
  }
  std::thread echo([fd = pair[1]] {
    char byte;
    while (::read(fd, &byte, 1) == 1 && byte != 'q') {
      if (::write(fd, &byte, 1) != 1) break;
    }
  });
  char byte = 'x';
  const auto started = Clock::now();
  for (auto _ : state) {
    if (::write(pair[0], &byte, 1) != 1 || ::read(pair[0], &byte, 1) != 1) {
      state.SkipWithError("the echo thread went away");
      break;
    }
  }
  const double micros = std::chrono::duration<double, std::micro>(Clock::now() - started).count();
  byte = 'q';
  (void)!::write(pair[0], &byte, 1);
  echo.join();
  ::close(pair[0]);
  ::close(pair[1]);
  if (state.iterations() > 0) {
    state.counters["handoff_us"] = micros / (2.0 * static_cast<double>(state.iterations()));
  }
}
BENCHMARK(BM_ThreadHandOff)->UseRealTime();

// A worker's start, whole: a pool of one made, its worker spawned and
// started (V8, the snapshot, the warm-up runs, the pages only starting
// needed given back, the lockdown), two trivial runs, the pool stopped. What
// a successor or a scaled-up daemon pays per worker. `p50_us` is the second
// run alone: what a guest of a new worker pays once it is serving (the first
// run also waits for the start).
void BM_WorkerStartAndFirstRun(benchmark::State& state) {
  std::vector<double> second;
  for (auto _ : state) {
    pool::WorkerPool pool(pool_options(1));
    pool::Request request;
    request.code = unique_source("async () => 1 + 1");
    pool.execute(std::move(request));
    request = pool::Request{};
    request.code = unique_source("async () => 1 + 1");
    const auto started = Clock::now();
    pool.execute(std::move(request));
    second.push_back(std::chrono::duration<double, std::micro>(Clock::now() - started).count());
  }
  set_percentiles(state, second);
}
BENCHMARK(BM_WorkerStartAndFirstRun)->Unit(benchmark::kMillisecond)->UseRealTime();

// How late past its timeout a worker answers a run that its own watchdog
// must stop: what the pool's `grace` (the kill of a silent worker at
// timeout + grace) has to cover. Each case is terminable (V8 or mruby
// checks for termination in it); the pool's grace is set far out of reach
// so every answer is the worker's own. `inflight` runs go at once to 2
// workers; `burners` threads in this process spin meanwhile, as a loaded
// machine does. Counters: lateness past the timeout, in ms (p50, p99, max
// over every run), from the run's hand-over to a worker to its settling (the
// pool's own clock for timeout + grace; a Ruby run that outlives its
// timeout ends its worker, and the wait for a replacement is not counted).
struct StopCase {
  const char* name;
  const char* code;
  sandbox::Language language = sandbox::Language::javascript;
  // Ruby code cannot be interrupted: its worker answers, then exits, and
  // the next run would wait for a replacement to start.
  bool ends_its_worker = false;
};

const StopCase kStopCases[] = {
    {"busy_loop", "for (;;) {}"},
    {"allocation_loop",
     "const keep = []; for (;;) { keep.push({n: keep.length}); if (keep.length > 1e5) "
     "keep.length = 0; }"},
    {"regexp_backtracking", "/(a+)+$/.test('a'.repeat(40) + 'b')"},
    {"awaiting_a_tool", "await codemode.never({})"},
    {"string_building", "let s = ''; for (;;) { s += 'x'; if (s.length > 1e6) s = ''; }"},
    {"ruby_busy_loop", "loop {}", sandbox::Language::ruby, true},
};

void BM_TimeoutLateness(benchmark::State& state, StopCase stop) {
  const auto inflight = static_cast<int>(state.range(0));
  const auto burners = static_cast<int>(state.range(1));
  pool::Options options = pool_options(2);
  options.grace = std::chrono::seconds(30);
  pool::WorkerPool pool(options);
  constexpr auto kTimeout = std::chrono::milliseconds(50);
  std::mutex mutex;
  std::condition_variable settled;
  std::vector<pool::ToolAnswer> never_answered;  // held until the pool is gone
  auto request = [&] {
    pool::Request r;
    r.limits.language = stop.language;
    r.code = unique_source(stop.code, stop.language);
    r.limits.timeout = kTimeout;
    r.tools = {"never"};
    r.dispatcher = [&](const std::string&, std::string, pool::ToolAnswer answer) {
      std::lock_guard lock(mutex);
      never_answered.push_back(std::move(answer));
    };
    return r;
  };
  // Both workers spawned and ready: two runs at once that await the tool
  // that never answers, until a 100 ms timeout (a tool wait ends without
  // ending the worker, in both languages). Lateness is counted from here on.
  bool measuring = false;
  auto ready_both = [&] {
    int warming = 2;
    {
      std::lock_guard lock(mutex);
      measuring = false;
    }
    for (int i = 0; i < 2; ++i) {
      pool::Request warm = request();
      warm.code =
          unique_source(stop.language == sandbox::Language::ruby ? "Codemode.never({})"
                                                                 : "await codemode.never({})",
                        stop.language);
      warm.limits.timeout = std::chrono::milliseconds(100);
      pool.submit(std::move(warm), [&](pool::Outcome) {
        std::lock_guard lock(mutex);
        if (--warming == 0) settled.notify_all();
      });
    }
    std::unique_lock lock(mutex);
    settled.wait(lock, [&] { return warming == 0; });
    measuring = true;
  };
  ready_both();
  std::atomic<bool> burning{true};
  std::vector<std::thread> burn;
  for (int i = 0; i < burners; ++i) {
    burn.emplace_back([&] {
      volatile std::uint64_t x = 0;
      while (burning.load(std::memory_order_relaxed)) x = x + 1;
    });
  }
  std::vector<double> late_ms;
  pool.subscribe([&](const pool::Event& event) {
    if (event.kind != pool::Event::Kind::execution_finished) return;
    std::lock_guard lock(mutex);
    if (!measuring) return;
    late_ms.push_back(std::chrono::duration<double, std::milli>(event.duration - kTimeout).count());
  });
  int wrong = 0;
  for (auto _ : state) {
    if (stop.ends_its_worker) {
      state.PauseTiming();
      ready_both();
      state.ResumeTiming();
    }
    int pending = inflight;
    for (int i = 0; i < inflight; ++i) {
      pool.submit(request(), [&](pool::Outcome outcome) {
        std::lock_guard lock(mutex);
        if (outcome.ok() || outcome.failure().code != FailureCode::timeout) ++wrong;
        if (--pending == 0) settled.notify_all();
      });
    }
    std::unique_lock lock(mutex);
    settled.wait(lock, [&] { return pending == 0; });
  }
  burning = false;
  for (std::thread& t : burn) t.join();
  if (wrong) state.SkipWithError("a run did not end as timeout");
  std::sort(late_ms.begin(), late_ms.end());
  if (!late_ms.empty()) {
    state.counters["late_p50_ms"] = late_ms[late_ms.size() / 2];
    state.counters["late_p99_ms"] =
        late_ms[std::min(late_ms.size() - 1, late_ms.size() * 99 / 100)];
    state.counters["late_max_ms"] = late_ms.back();
  }
}

void register_all() {
  for (const StopCase& stop : kStopCases) {
    benchmark::RegisterBenchmark((std::string("BM_TimeoutLateness/") + stop.name).c_str(),
                                 BM_TimeoutLateness, stop)
        ->ArgsProduct({{1, 2}, {0, 4}})
        ->ArgNames({"inflight", "burners"})
        ->Iterations(40)
        ->Unit(benchmark::kMillisecond);
  }
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
