// tests/pool/memory_test.cc: what a pooled run can make its worker hold.
// Hostile guests grow memory where the engine's own count does not look
// (native builtins, allocations outside the JS heap); the pool measures the
// worker from outside and ends such runs as memory_limit, and the next run
// on the pool succeeds. Each case names the worker's peak it allows.
#include <sys/resource.h>

#include <chrono>
#include <string>

#include "corral/pool.hpp"
#include "gtest/gtest.h"

namespace corral::pool {
namespace {

using namespace std::chrono_literals;

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
#if defined(__SANITIZE_ADDRESS__)
constexpr std::uint64_t kSanitizerSlackMiB = 512;  // as the pool allows
#else
constexpr std::uint64_t kSanitizerSlackMiB = 0;
#endif

Options memory_options() {
  Options options;
  options.worker_command = {CORRAL_BINARY, "worker"};
  options.max_workers = 1;
  return options;
}

Request hostile(std::string code, std::uint64_t memory_limit = 32 * kMiB) {
  Request request;
  request.shape = Request::Shape::eval;
  request.code = std::move(code);
  request.limits.timeout = std::chrono::seconds(20);
  request.limits.memory_limit = memory_limit;
  return request;
}

// "held N MiB" from a memory stop's message; 0 if the message has none.
std::uint64_t held_mib(const std::string& message) {
  const std::size_t at = message.find(" held ");
  return at == std::string::npos ? 0 : std::stoull(message.substr(at + 6));
}

void expect_next_run_succeeds(WorkerPool& pool) {
  Outcome next = pool.execute(hostile("[1, 2].join('+')"));
  ASSERT_TRUE(next.ok()) << next.failure().message;
  EXPECT_EQ(next.execution().value(), "\"1+2\"");
}

struct Case {
  const char* name;
  const char* code;
  // Under AddressSanitizer the instrumented engine grows this case's worker
  // by ~12 MiB/s (measured: 560 -> 812 MiB in 20 s), so the 20 s timeout comes
  // before the pool's sanitizer-widened threshold. Release builds assert it.
  bool slow_under_sanitizers = false;
};

class PoolMemory : public ::testing::TestWithParam<Case> {};

// Each of these grows its worker past any run's limit if nothing stops it
// (measured unguarded: from 0.5 GB to past 2 GB). With a 32 MiB limit, the
// worker may reach its baseline + the limit + run_memory_overhead (128 MiB)
// + what it grows in one watch interval and the stop's grace.
TEST_P(PoolMemory, EndsAsMemoryLimitAndTheNextRunSucceeds) {
#if defined(__SANITIZE_ADDRESS__)
  if (GetParam().slow_under_sanitizers) {
    GTEST_SKIP() << "grows too slowly under AddressSanitizer to reach its threshold in time";
  }
#endif
  WorkerPool pool(memory_options());
  expect_next_run_succeeds(pool);  // a warm worker: its baseline is fair
  const auto start = std::chrono::steady_clock::now();
  Outcome outcome = pool.execute(hostile(GetParam().code));
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(outcome.ok()) << "succeeded with " << outcome.execution().value().substr(0, 80);
  EXPECT_EQ(outcome.failure().code, FailureCode::memory_limit) << outcome.failure().message;
  EXPECT_FALSE(outcome.failure().retryable());
  EXPECT_LT(took, 10s);
  RecordProperty("message", outcome.failure().message);
  if (const std::uint64_t held = held_mib(outcome.failure().message)) {
    EXPECT_LT(held, 32 + 128 + 512 + kSanitizerSlackMiB) << outcome.failure().message;
  }
  expect_next_run_succeeds(pool);
}

INSTANTIATE_TEST_SUITE_P(
    Hostile, PoolMemory,
    ::testing::Values(
        Case{"RopeAsValue", "'x'.repeat((1 << 29) - 24)"},
        Case{"FlattenedRope", "const s = 'x'.repeat((1 << 29) - 24); s.charCodeAt(7)"},
        Case{"ArrayFromHugeArrayLike", "Array.from({length: 2 ** 32 - 1})"},
        Case{"SpreadIntlSegments",
             "[...new Intl.Segmenter('en', {granularity: 'word'}).segment('ab '.repeat(2e4))]"},
        Case{"GlobalReplaceGrowingARope", "'ab'.repeat(2 ** 27).replace(/a/g, 'bb').length", true},
        Case{"ConsoleOfHugeRope", "console.log('x'.repeat((1 << 29) - 24)); 1"},
        Case{"JoinOfHugeArray", "new Array(2 ** 26).fill('ab').join('')"},
        Case{"ObjectFromEntriesBomb",
             "Object.fromEntries(Array.from({length: 1e7}, (_, i) => [i, i]))"},
        Case{"ManyRegExpMatches", "[...'a'.repeat(1e7).matchAll(/a/g)].length"},
        Case{"MapOfStrings", "const m = new Map(); for (let i = 0; ; i++) m.set(i, 'v' + i)"}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

TEST(PoolMemoryStop, AStoppedRunKeepsItsOutput) {
  // Output survives only a stop the worker answers within the grace (a
  // killed worker's runs end without it, as docs/pool.md says). The default
  // 100 ms was missed on a loaded 2-core CI machine while V8 was mid-GC, so
  // this test, which is about the answered stop, gives the worker 5 s.
  Options options = memory_options();
  options.memory_stop_grace = std::chrono::seconds(5);
  WorkerPool pool(options);
  expect_next_run_succeeds(pool);
  Outcome outcome = pool.execute(
      hostile("console.log('before'); const keep = []; "
              "for (;;) keep.push(new Intl.Segmenter('en').segment('x'.repeat(1e5)))"));
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.failure().code, FailureCode::memory_limit) << outcome.failure().message;
  ASSERT_TRUE(outcome.failure().execution);
  EXPECT_EQ(outcome.failure().execution->stdout_text(), "before\n");
  expect_next_run_succeeds(pool);
}

TEST(PoolMemoryStop, RunsUnderTheirLimitAreNotStopped) {
  WorkerPool pool(memory_options());
  // 24 MiB of live strings under a 32 MiB limit, held while the watch ticks.
  Request request = hostile(
      "const keep = []; for (let i = 0; i < 24; i++) keep.push('y'.repeat(1 << 20) + i);"
      "const until = Date.now() + 300; while (Date.now() < until) {} keep.length");
  request.limits.profile = sandbox::Profile::permissive;  // a clock that moves
  Outcome outcome = pool.execute(std::move(request));
  ASSERT_TRUE(outcome.ok()) << outcome.failure().message;
  EXPECT_EQ(outcome.execution().value(), "24");
}

// A run with no memory_limit is not watched; the kernel's ceiling on the
// worker (RLIMIT_DATA) still ends it, as memory_limit, and the pool goes on.
TEST(PoolMemoryCeiling, AnUnlimitedRunEndsAtTheWorkersCeiling) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "no RLIMIT_DATA under AddressSanitizer (its shadow memory passes any ceiling)";
#endif
  Options options = memory_options();
  options.worker_memory_ceiling = 512 * kMiB;
  WorkerPool pool(options);
  expect_next_run_succeeds(pool);
  for (const char* code :
       {"Array.from({length: 2 ** 32 - 1})",
        "const keep = []; for (;;) keep.push('z'.repeat(1 << 20) + keep.length)"}) {
    SCOPED_TRACE(code);
    Request request = hostile(code);
    request.limits.memory_limit = std::nullopt;
    Outcome outcome = pool.execute(std::move(request));
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.failure().code, FailureCode::memory_limit) << outcome.failure().message;
    EXPECT_NE(outcome.failure().message.find("ran out of memory at its ceiling of 536870912 bytes"),
              std::string::npos)
        << outcome.failure().message;
    expect_next_run_succeeds(pool);
  }
  EXPECT_GE(pool.stats().worker_exits[static_cast<int>(WorkerExit::memory_bound)], 2u);
}

// Builtins that loop natively ignore V8's termination: in-process they run
// on past the timeout (docs/sandbox.md); in the pool the worker is killed
// at timeout + grace and the run ends as timeout.
class PoolNativeLoop : public ::testing::TestWithParam<Case> {};

TEST_P(PoolNativeLoop, EndsAtTimeoutPlusGraceAndTheNextRunSucceeds) {
  Options options = memory_options();
  options.grace = std::chrono::milliseconds(500);
  WorkerPool pool(options);
  Request request = hostile(GetParam().code);
  request.limits.timeout = std::chrono::milliseconds(300);
  const auto start = std::chrono::steady_clock::now();
  Outcome outcome = pool.execute(std::move(request));
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.failure().code, FailureCode::timeout) << outcome.failure().message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  expect_next_run_succeeds(pool);
}

INSTANTIATE_TEST_SUITE_P(
    Hostile, PoolNativeLoop,
    ::testing::Values(
        Case{"IndexOfHugeArrayLike", "Array.prototype.indexOf.call({length: 2 ** 53 - 1}, 1)"},
        Case{"IncludesHugeArrayLike", "Array.prototype.includes.call({length: 2 ** 53 - 1}, 1)"},
        Case{"LastIndexOfSparse", "const a = []; a[2 ** 32 - 2] = 1; a.lastIndexOf(0); 1"},
        Case{"ReverseSparse", "const a = []; a[2 ** 32 - 2] = 1; a.reverse(); 1"}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

TEST(PoolMemoryStop, OptionsAreValidated) {
  Options options = memory_options();
  options.memory_watch_interval = std::chrono::seconds(0);
  EXPECT_THROW(validate(options), std::invalid_argument);
  options = memory_options();
  options.memory_stop_grace = std::chrono::milliseconds(-1);
  EXPECT_THROW(validate(options), std::invalid_argument);
}

}  // namespace
}  // namespace corral::pool
