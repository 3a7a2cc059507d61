// Sandbox benchmarks: fresh-context runs on the standard workloads
// (../shared/bench/workloads.json) and the cost of tool calls and console.
//
//   build/test/bench/sandbox_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true
//
// The workloads file is read at start; if it is missing, the built-in copy
// of the trivial workload is used. Every run gets a source no earlier run
// had (corral::bench::unique_source), as real traffic does, except in
// BM_FreshContextEvalSameSource, which shows what V8's compile cache hides.
#include <benchmark/benchmark.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "core/json.hpp"
#include "corral/sandbox.hpp"
#include "sandbox/typescript/strip.hpp"
#include "workloads.hpp"

namespace {

using corral::bench::unique_source;
using corral::sandbox::Options;
using corral::sandbox::Sandbox;
using corral::sandbox::ToolReply;

std::unique_ptr<Sandbox> make_sandbox() {
  auto sandbox = std::make_unique<Sandbox>(Options{});
  sandbox->bind_async("codemode.echo",
                      [](std::string args, ToolReply reply) { reply.resolve(std::move(args)); });
  sandbox->bind("codemode.echo_sync", [](std::string_view args) { return std::string(args); });
  return sandbox;
}

// Per-iteration latency percentiles, as counters (p50_us, p90_us), for
// comparison with the peer benchmark's p50 (bench/peers), which a mean on a
// loaded machine cannot give; and the CPU time of the whole process per run
// (cpu_us_per_run: the preparer thread builds the next context, V8's own
// threads collect and compile, and none of that is the benchmark's cpu_time,
// which counts the timing thread only), the figure the peers report too.
class Latencies {
 public:
  Latencies() : cpu_start_(process_cpu_us()) {}
  void add(std::chrono::steady_clock::duration d) {
    samples_.push_back(std::chrono::duration<double, std::micro>(d).count());
  }
  void report(benchmark::State& state) {
    if (samples_.empty()) return;
    state.counters["cpu_us_per_run"] =
        (process_cpu_us() - cpu_start_) / static_cast<double>(samples_.size());
    std::sort(samples_.begin(), samples_.end());
    state.counters["p50_us"] = samples_[samples_.size() / 2];
    state.counters["p90_us"] = samples_[samples_.size() * 9 / 10];
  }

 private:
  static double process_cpu_us() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
  }

  double cpu_start_;
  std::vector<double> samples_;
};

// A typical 2 KB code-mode snippet in TypeScript: declarations, generics,
// annotations, `as`, `satisfies`, a class; it calls one tool and returns a
// summary (tests/sandbox/typescript/corpus has 330 more of its kind).
constexpr std::string_view kTypeScript2KB = R"(async (): Promise<Summary> => {
  interface Reading { city: string; celsius: number; wind?: number; tags: readonly string[] }
  type Unit = "C" | "F";
  type Summary = { count: number; warmest: string | null; mean: number; unit: Unit };
  type ByCity<T extends Reading> = Record<string, T[]>;
  const toF = (c: number): number => Math.round((c * 9) / 5 + 32);
  function groupBy<T extends Reading>(rows: T[], key: (r: T) => string): ByCity<T> {
    const out: ByCity<T> = {};
    for (const row of rows) {
      const k: string = key(row);
      (out[k] ??= []).push(row);
    }
    return out;
  }
  abstract class Stat<T> {
    protected readonly values: T[] = [];
    add(value: T): this { this.values.push(value); return this; }
    abstract result(): number;
  }
  class Mean extends Stat<number> {
    override result(): number {
      return this.values.length === 0 ? 0 : this.values.reduce((a: number, b: number) => a + b, 0) / this.values.length;
    }
  }
  const raw = (await codemode.echo({
    rows: [
      { city: "Oslo", celsius: 3, tags: ["north"] },
      { city: "Lisbon", celsius: 19, wind: 12, tags: ["coast"] },
      { city: "Cairo", celsius: 31, tags: [] },
      { city: "Oslo", celsius: 5, wind: 3, tags: ["north", "rain"] },
    ] satisfies Reading[],
  })) as { rows: Reading[] };
  const rows: Reading[] = raw.rows!;
  const groups = groupBy<Reading>(rows, (r: Reading): string => r.city);
  const mean = new Mean();
  let warmest: Reading | undefined;
  for (const [city, list] of Object.entries(groups) as [string, Reading[]][]) {
    for (const r of list) {
      mean.add(r.celsius);
      if (!warmest || r.celsius > warmest!.celsius) warmest = r;
    }
    if (city.length === 0) throw new Error(`empty city name` as string);
  }
  const unit: Unit = "F";
  return {
    count: rows.length,
    warmest: warmest?.city ?? null,
    mean: unit === "F" ? toF(mean.result()) : mean.result(),
    unit,
  } satisfies Summary;
})";

// TypeScript's cost (issue 18's goal: under 5% of a trivial run for a
// typical 2 KB snippet). BM_StripTypes2KB is the stripper alone.
// BM_Execute2KBTypeScriptVsJavaScript runs the snippet as TypeScript and,
// stripped beforehand, as JavaScript, in turns in one loop (a second
// benchmark in the same process runs slower for reasons of its own, so the
// two are never compared across benchmarks): ts_p50_us - js_p50_us is what
// a TypeScript guest pays per run. Its argument is the runs per turn: 1,
// each sandbox's runs apart (its next context ready when a run comes); 3,
// runs back to back, where the second and third (the ones timed) wait for
// the context the preparer builds after the previous run.
void BM_StripTypes2KB(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        corral::sandbox::typescript::strip_types(unique_source(kTypeScript2KB)));
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kTypeScript2KB.size()));
}
BENCHMARK(BM_StripTypes2KB)->Unit(benchmark::kMicrosecond);

// The stripper over the 333 snippets of tests/sandbox/typescript/corpus in
// turn (221 KB, 664 bytes on average): each strip reads a different text,
// so the branch predictor cannot learn one input's path through the parser
// as it does in BM_StripTypes2KB. Compare the two by bytes per second.
void BM_StripTypesCorpus(benchmark::State& state) {
  std::vector<std::string> corpus;
  std::size_t bytes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(CORRAL_TYPESCRIPT_CORPUS)) {
    std::ifstream in(entry.path(), std::ios::binary);
    corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    bytes += corpus.back().size();
  }
  std::sort(corpus.begin(), corpus.end());
  for (auto _ : state) {
    for (const std::string& snippet : corpus) {
      benchmark::DoNotOptimize(corral::sandbox::typescript::strip_types(snippet));
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_StripTypesCorpus)->Unit(benchmark::kMillisecond);

// The same with the caches cold, as inside a run (V8 has just filled them):
// 32 MiB written between iterations, outside the timing.
void BM_StripTypes2KBColdCaches(benchmark::State& state) {
  std::vector<char> evict(std::size_t{32} << 20);
  for (auto _ : state) {
    state.PauseTiming();
    for (std::size_t i = 0; i < evict.size(); i += 64) evict[i] = static_cast<char>(i);
    benchmark::DoNotOptimize(evict.data());
    const std::string code = unique_source(kTypeScript2KB);
    state.ResumeTiming();
    benchmark::DoNotOptimize(corral::sandbox::typescript::strip_types(code));
  }
}
BENCHMARK(BM_StripTypes2KBColdCaches)->Unit(benchmark::kMicrosecond);

// Issue 18's goal as one figure: a trivial run, then a strip of the 2 KB
// snippet (a new text each time) right after it on the same thread, as a
// run strips after V8's previous work, both timed. share_pct is the strip's
// p50 over the run's p50: what the goal holds under 5 %. The strip here pays
// the cold caches and branch history V8 leaves behind, which the warm
// benchmarks above do not.
void BM_StripTypesShareOfTrivialRun(benchmark::State& state) {
  auto sandbox = make_sandbox();
  std::vector<double> run_us;
  std::vector<double> strip_us;
  const auto since = [](std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
        .count();
  };
  for (auto _ : state) {
    const std::string code = unique_source("1+1");
    const std::string typescript = unique_source(kTypeScript2KB);
    auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(sandbox->eval(code));
    run_us.push_back(since(start));
    start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(corral::sandbox::typescript::strip_types(typescript));
    strip_us.push_back(since(start));
  }
  const auto p50 = [](std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  state.counters["run_p50_us"] = p50(run_us);
  state.counters["strip_p50_us"] = p50(strip_us);
  state.counters["share_pct"] = 100 * p50(strip_us) / p50(run_us);
}
BENCHMARK(BM_StripTypesShareOfTrivialRun)->Unit(benchmark::kMicrosecond);

void BM_Execute2KBTypeScriptVsJavaScript(benchmark::State& state) {
  const auto make = [](corral::Language language) {
    Options options;
    options.language = language;
    auto sandbox = std::make_unique<Sandbox>(options);
    sandbox->bind_async("codemode.echo",
                        [](std::string args, ToolReply reply) { reply.resolve(std::move(args)); });
    return sandbox;
  };
  auto typescript = make(corral::Language::typescript);
  auto javascript = make(corral::Language::javascript);
  const std::string stripped = corral::sandbox::typescript::strip_types(kTypeScript2KB).code;
  const auto runs_per_turn = static_cast<int>(state.range(0));
  std::vector<double> ts_us;
  std::vector<double> js_us;
  const auto turn = [runs_per_turn](Sandbox& sandbox, std::string_view source,
                                    std::vector<double>& into) {
    for (int i = 0; i < runs_per_turn; ++i) {
      const std::string code = unique_source(source);
      const auto start = std::chrono::steady_clock::now();
      benchmark::DoNotOptimize(sandbox.execute(code));
      const auto us =
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start);
      if (runs_per_turn == 1 || i > 0) into.push_back(us.count());
    }
  };
  bool typescript_first = true;  // each goes first half the time
  for (auto _ : state) {
    if (typescript_first) turn(*typescript, kTypeScript2KB, ts_us);
    turn(*javascript, stripped, js_us);
    if (!typescript_first) turn(*typescript, kTypeScript2KB, ts_us);
    typescript_first = !typescript_first;
  }
  const auto p50 = [](std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  state.counters["ts_p50_us"] = p50(ts_us);
  state.counters["js_p50_us"] = p50(js_us);
}
BENCHMARK(BM_Execute2KBTypeScriptVsJavaScript)->Arg(1)->Arg(3)->Unit(benchmark::kMicrosecond);

// Fresh context + eval("1+1") back to back: the throughput compared with
// isolated-vm. Each run pays for its context, either built by the run itself
// or by the sandbox's preparer thread between runs (which then holds the
// isolate while the next run waits).
void BM_FreshContextEval(benchmark::State& state) {
  auto sandbox = make_sandbox();
  Latencies latencies;
  for (auto _ : state) {
    const std::string code = unique_source("1+1");
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(sandbox->eval(code));
    latencies.add(std::chrono::steady_clock::now() - start);
  }
  latencies.report(state);
}
BENCHMARK(BM_FreshContextEval)->Unit(benchmark::kMicrosecond);

// The same with one source for every run: V8 finds the compiled script in
// its per-isolate cache. The gap to BM_FreshContextEval is what a benchmark
// that repeats its source hides.
void BM_FreshContextEvalSameSource(benchmark::State& state) {
  auto sandbox = make_sandbox();
  Latencies latencies;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(sandbox->eval("1+1"));
    latencies.add(std::chrono::steady_clock::now() - start);
  }
  latencies.report(state);
}
BENCHMARK(BM_FreshContextEvalSameSource)->Unit(benchmark::kMicrosecond);

// The same run after the sandbox was idle for 2 ms (not timed): the latency
// of a request that finds the spare context the preparer built after the
// previous run. Still a fresh context per run; its creation is off the
// request's critical path, not free (see BM_FreshContextEval).
void BM_FreshContextEvalAfterIdle(benchmark::State& state) {
  auto sandbox = make_sandbox();
  Latencies latencies;
  for (auto _ : state) {
    state.PauseTiming();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const std::string code = unique_source("1+1");
    state.ResumeTiming();
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(sandbox->eval(code));
    latencies.add(std::chrono::steady_clock::now() - start);
  }
  latencies.report(state);
}
// A fixed count: the untimed idle gaps would otherwise make --benchmark_min_time
// run for minutes.
BENCHMARK(BM_FreshContextEvalAfterIdle)->Iterations(3000)->Unit(benchmark::kMicrosecond);

// Sandbox construction (a new isolate) plus its first trivial eval.
void BM_NewSandboxAndEval(benchmark::State& state) {
  for (auto _ : state) {
    Sandbox sandbox;
    benchmark::DoNotOptimize(sandbox.eval(unique_source("1+1")));
  }
}
BENCHMARK(BM_NewSandboxAndEval)->Unit(benchmark::kMicrosecond);

// One run making N sync tool calls; the per-call cost is the slope between
// N = 0 and N = 10000 (items_per_second counts calls).
void BM_SyncToolCalls(benchmark::State& state) {
  auto sandbox = make_sandbox();
  const std::string code = "let s = 0; for (let i = 0; i < " + std::to_string(state.range(0)) +
                           "; i++) s += codemode.echo_sync(i); s";
  for (auto _ : state) benchmark::DoNotOptimize(sandbox->eval(unique_source(code)));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_SyncToolCalls)->Arg(0)->Arg(10000)->Unit(benchmark::kMicrosecond);

// The same with the async tool, awaited one at a time.
void BM_AsyncToolCalls(benchmark::State& state) {
  auto sandbox = make_sandbox();
  const std::string code = "async () => { let s = 0; for (let i = 0; i < " +
                           std::to_string(state.range(0)) +
                           "; i++) s += await codemode.echo(i); return s; }";
  for (auto _ : state) benchmark::DoNotOptimize(sandbox->execute(unique_source(code)));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_AsyncToolCalls)->Arg(0)->Arg(1000)->Unit(benchmark::kMicrosecond);

void BM_Console1000Lines(benchmark::State& state) {
  auto sandbox = make_sandbox();
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        sandbox->eval(unique_source("for (let i = 0; i < 1000; i++) console.log('line', i)")));
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_Console1000Lines)->Unit(benchmark::kMicrosecond);

// The standard workloads, each a fresh context per execution.
void register_workloads() {
  for (const corral::bench::Workload& workload : corral::bench::load_workloads()) {
    const std::string& name = workload.name;
    const std::string source = workload.source;
    const std::string expect = workload.expect;
    benchmark::RegisterBenchmark(("BM_Workload/" + name).c_str(), [source, expect](
                                                                      benchmark::State& state) {
      auto sandbox = make_sandbox();
      const auto first = sandbox->execute(unique_source(source));
      if (first.value() != expect) {
        state.SkipWithError(("unexpected result " + first.value()).c_str());
        return;
      }
      Latencies latencies;
      for (auto _ : state) {
        const std::string code = unique_source(source);
        const auto start = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(sandbox->execute(code));
        latencies.add(std::chrono::steady_clock::now() - start);
      }
      latencies.report(state);
    })->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_workloads();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
