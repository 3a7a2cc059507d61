// Ruby guests next to JavaScript ones: a trivial eval on a warm sandbox, a
// fresh sandbox plus a trivial eval, tool calls, and the same through the
// worker pool. Results and how to read them: BENCHMARKS.md, "Ruby guests".
// Every run's code is a text no earlier run had (bench/unique_source.hpp).
#include <benchmark/benchmark.h>

#include <chrono>
#include <string>
#include <thread>

#include "corral/pool.hpp"
#include "corral/sandbox.hpp"
#include "sandbox/hosted.hpp"
#include "unique_source.hpp"

namespace corral::sandbox {
namespace {

using bench::unique_source;

Options options_for(Language language) {
  Options options;
  options.language = language;
  options.timeout = std::chrono::seconds(10);
  return options;
}

// The same text is a program in both languages.
constexpr const char* kTrivial = "1 + 1";

void BM_TrivialEval(benchmark::State& state, Language language) {
  Sandbox sandbox(options_for(language));
  sandbox.eval(kTrivial);
  for (auto _ : state) benchmark::DoNotOptimize(sandbox.eval(unique_source(kTrivial, language)));
}
BENCHMARK_CAPTURE(BM_TrivialEval, ruby, Language::ruby)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_TrivialEval, javascript, Language::javascript)->Unit(benchmark::kMicrosecond);

// The same after the sandbox was idle for 2 ms (not timed): the helper (or
// V8's preparer) has built the next run's fresh state meanwhile.
void BM_TrivialEvalAfterIdle(benchmark::State& state, Language language) {
  Sandbox sandbox(options_for(language));
  sandbox.eval(kTrivial);
  for (auto _ : state) {
    state.PauseTiming();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const std::string code = unique_source(kTrivial, language);
    state.ResumeTiming();
    benchmark::DoNotOptimize(sandbox.eval(code));
  }
}
BENCHMARK_CAPTURE(BM_TrivialEvalAfterIdle, ruby, Language::ruby)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_TrivialEvalAfterIdle, javascript, Language::javascript)
    ->Unit(benchmark::kMicrosecond);

// kobako's "Sandbox.new + first eval(\"nil\")": for Ruby this includes
// forking the helper process and killing it again.
void BM_FreshSandboxEval(benchmark::State& state, Language language) {
  for (auto _ : state) {
    Sandbox sandbox(options_for(language));
    benchmark::DoNotOptimize(sandbox.eval(unique_source("nil", language)));
  }
}
BENCHMARK_CAPTURE(BM_FreshSandboxEval, ruby, Language::ruby)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_FreshSandboxEval, javascript, Language::javascript)
    ->Unit(benchmark::kMicrosecond);

// The interpreter alone: Ruby run inline (no helper, no IPC), as a pooled
// worker runs it.
void BM_TrivialEvalInline(benchmark::State& state) {
  std::unique_ptr<Sandbox> sandbox = Hosted::make(options_for(Language::ruby), Hosting{false, {}});
  sandbox->eval(kTrivial);
  for (auto _ : state)
    benchmark::DoNotOptimize(sandbox->eval(unique_source(kTrivial, Language::ruby)));
}
BENCHMARK(BM_TrivialEvalInline)->Unit(benchmark::kMicrosecond);

// N synchronous tool calls in one run (KV.get is a tool path in both).
void BM_ToolCalls(benchmark::State& state, Language language) {
  Sandbox sandbox(options_for(language));
  sandbox.bind("KV.get", [](std::string_view args) { return std::string(args); });
  const std::string n = std::to_string(state.range(0));
  const std::string code = language == Language::ruby
                               ? "i = 0; " + n + ".times { i += KV.get(1) }; i"
                               : "let i = 0; for (let k = 0; k < " + n + "; k++) i += KV.get(1); i";
  sandbox.eval(code);
  for (auto _ : state) benchmark::DoNotOptimize(sandbox.eval(unique_source(code, language)));
}
BENCHMARK_CAPTURE(BM_ToolCalls, ruby, Language::ruby)
    ->Arg(0)
    ->Arg(1)
    ->Arg(1000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ToolCalls, javascript, Language::javascript)
    ->Arg(0)
    ->Arg(1)
    ->Arg(1000)
    ->Unit(benchmark::kMicrosecond);

// A trivial eval through the worker pool (one hardened worker, warm).
void BM_PoolTrivialEval(benchmark::State& state, Language language) {
  pool::Options options;
  options.worker_command = {CORRAL_BINARY, "worker"};
  options.max_workers = 1;
  options.retire_after_executions = 1'000'000;
  pool::WorkerPool pool(options);
  auto request = [&] {
    pool::Request r;
    r.shape = pool::Request::Shape::eval;
    r.code = unique_source(kTrivial, language);
    r.limits = options_for(language);
    return r;
  };
  pool::Outcome warm = pool.execute(request());
  if (!warm.ok()) {
    state.SkipWithError(warm.failure().message.c_str());
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(pool.execute(request()));
}
BENCHMARK_CAPTURE(BM_PoolTrivialEval, ruby, Language::ruby)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_PoolTrivialEval, javascript, Language::javascript)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace corral::sandbox

BENCHMARK_MAIN();
