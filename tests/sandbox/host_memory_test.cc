// What a run makes its host hold outside the V8 heap: its value, its tool
// arguments and its console lines are bounded before they are copied out of
// the isolate, and builtins that loop natively are routed where termination
// lands. Each case asserts the failure code, the host's peak RSS (ctest runs
// every test in its own process, so VmHWM is this test's) and the next run.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <string>

#include "sandbox_test_util.hpp"

namespace corral::sandbox {
namespace {

using testing::eval_in;
using testing::execute_in;

// Peak resident memory of this process so far.
std::uint64_t peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  ADD_FAILURE() << "no VmHWM in /proc/self/status";
  return 0;
}

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kLimit = 16 * kMiB;
// What the host may hold past its peak before the run: the run's limit,
// the V8 heap's own slack, and (under ASan) shadow memory.
constexpr std::uint64_t kOverhead = 160 * kMiB;

Options bounded(double timeout_seconds = 5.0) {
  Options options;
  options.timeout = std::chrono::milliseconds(std::llround(timeout_seconds * 1000));
  options.memory_limit = kLimit;
  return options;
}

class HostMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    // A first run loads everything a run needs, so the baseline is fair.
    ASSERT_TRUE(eval_in(warm_, "1").ok());
    before_ = peak_rss_bytes();
  }
  void TearDown() override {
    const std::uint64_t after = peak_rss_bytes();
    EXPECT_LE(after, before_ + kLimit + kOverhead)
        << "peak RSS grew by " << (after - before_) / kMiB << " MiB";
  }
  Sandbox warm_{bounded()};
  std::uint64_t before_ = 0;
};

void expect_failure(const testing::Ended& ended, FailureCode code, std::string_view says) {
  ASSERT_TRUE(ended.code.has_value()) << "run succeeded with " << ended.value().substr(0, 80);
  EXPECT_EQ(*ended.code, code) << ended.message;
  EXPECT_NE(ended.message.find(says), std::string::npos) << ended.message;
}

void expect_still_usable(Sandbox& sandbox) {
  auto after = eval_in(sandbox, "[1, 2].join('+')");
  ASSERT_TRUE(after.ok()) << after.message;
  EXPECT_EQ(after.value(), "\"1+2\"");
}

// ---- the run's value ------------------------------------------------------

TEST_F(HostMemory, AValueLongerThanTheLimitIsRefusedBeforeItIsCopied) {
  // A rope of 512 MiB: tiny in the heap, huge once flattened and copied.
  Sandbox sandbox(bounded());
  const auto start = std::chrono::steady_clock::now();
  auto ended = execute_in(sandbox, "async () => 'x'.repeat((1 << 29) - 24)");
  expect_failure(ended, FailureCode::memory_limit, "too large as JSON");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  expect_still_usable(sandbox);
}

TEST_F(HostMemory, AValueThatGrowsPastTheLimitOnlyWhenEscapedIsRefused) {
  // 4 M control characters: 4 MiB in the heap, 24 MiB as JSON escapes.
  Sandbox sandbox(bounded());
  expect_failure(eval_in(sandbox, "'\\u0001'.repeat(4 << 20)"), FailureCode::memory_limit,
                 "too large as JSON");
  expect_still_usable(sandbox);
}

TEST_F(HostMemory, AHugeSparseArrayValueIsRefusedNotWrittenAsNulls) {
  Sandbox sandbox(bounded());
  expect_failure(eval_in(sandbox, "new Array(2 ** 32 - 1)"), FailureCode::memory_limit, "value[");
  expect_still_usable(sandbox);
}

TEST_F(HostMemory, ManyKeysWhoseJsonPassesTheLimitAreRefused) {
  Sandbox sandbox(bounded());
  expect_failure(eval_in(sandbox,
                         "const o = {}; const k = '\\u0001'.repeat(1000);"
                         "for (let i = 0; i < 4000; i++) o[k + i] = 0; o"),
                 FailureCode::memory_limit, "too large as JSON");
  expect_still_usable(sandbox);
}

TEST_F(HostMemory, AValueJustUnderTheLimitStillRoundTrips) {
  Sandbox sandbox(bounded());
  auto ended = eval_in(sandbox, "'y'.repeat(8 << 20)");
  ASSERT_TRUE(ended.ok()) << ended.message;
  EXPECT_EQ(ended.value().size(), (std::size_t{8} << 20) + 2);
}

// ---- console lines --------------------------------------------------------

TEST_F(HostMemory, AHugeConsoleLineCostsOnlyWhatTheChannelKeeps) {
  Options options = bounded();
  options.memory_limit = 64 * kMiB;
  options.stdout_limit = kMiB;
  Sandbox sandbox(options);
  auto ended = eval_in(sandbox,
                       "const s = 'x'.repeat(16 << 20);"
                       "for (let i = 0; i < 50; i++) console.log(s, s, {s}); 'done'");
  ASSERT_TRUE(ended.ok()) << ended.message;
  EXPECT_EQ(ended.execution->stdout_text().size(), kMiB);
  EXPECT_TRUE(ended.execution->stdout_truncated());
  expect_still_usable(sandbox);
}

TEST_F(HostMemory, AConsoleFormatStringIsBoundedToo) {
  Options options = bounded();
  options.stdout_limit = 1024;
  Sandbox sandbox(options);
  auto ended = eval_in(sandbox, "console.log('%s'.repeat(1 << 20), 'a'); 1");
  ASSERT_TRUE(ended.ok()) << ended.message;
  EXPECT_EQ(ended.execution->stdout_text().size(), 1024u);
  EXPECT_TRUE(ended.execution->stdout_truncated());
}

// ---- tool arguments ---------------------------------------------------------

TEST_F(HostMemory, AToolArgumentLargerThanTheLimitNeverReachesTheTool) {
  bool called = false;
  Sandbox sandbox(bounded());
  sandbox.bind("codemode.echo", [&](std::string_view args) {
    called = true;
    return std::string(args);
  });
  auto ended = execute_in(sandbox, "async () => codemode.echo({text: 'x'.repeat((1 << 29) - 24)})");
  expect_failure(ended, FailureCode::tool_argument, "too large as JSON");
  EXPECT_FALSE(called);
  // The guest can catch it like any argument error and go on.
  auto caught = execute_in(sandbox,
                           "async () => { try { codemode.echo('x'.repeat(1 << 28)); }"
                           " catch (e) { return e.message.includes('echo'); } }");
  ASSERT_TRUE(caught.ok()) << caught.message;
  EXPECT_EQ(caught.value(), "true");
  EXPECT_FALSE(called);
}

// ---- builtins that loop natively --------------------------------------------

TEST_F(HostMemory, SpreadingIntlSegmentsStopsAtTheLimitOrTimeout) {
  // Unguarded, this spread ran 27 s past a 1 s timeout and grew past 2 GB.
  Sandbox sandbox(bounded(1.0));
  const auto start = std::chrono::steady_clock::now();
  auto ended = execute_in(sandbox,
                          "async () => [...new Intl.Segmenter('en', {granularity: "
                          "'word'}).segment('ab '.repeat(2e4))]");
  ASSERT_TRUE(ended.code.has_value());
  EXPECT_TRUE(*ended.code == FailureCode::memory_limit || *ended.code == FailureCode::timeout)
      << ended.message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  expect_still_usable(sandbox);
}

TEST_F(HostMemory, ArrayFromIntlSegmentsIsStoppedByTheTimeout) {
  Sandbox sandbox(bounded(0.5));
  const auto start = std::chrono::steady_clock::now();
  auto ended = eval_in(sandbox,
                       "const seg = new Intl.Segmenter('en', {granularity: 'grapheme'});"
                       "let n = 0; for (;;) n += Array.from(seg.segment('a'.repeat(1e3))).length");
  expect_failure(ended, FailureCode::timeout, "timeout");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

// Unguarded, sorting an array-like longer than V8's largest backing store
// (2**27 - 2 elements) ended the whole host process ("Fatal javascript OOM
// in invalid array length", SIGTRAP), and a replacer array with one element
// at 2**32-2 kept JSON.stringify looping past any timeout. Both are now a
// RangeError the guest can catch, at once.
TEST_F(HostMemory, HugeLengthsForSortAndStringifyAreRangeErrors) {
  Sandbox sandbox(bounded(2.0));
  for (const char* code : {
           "Array.prototype.sort.call({length: 2**28})",
           "Array.prototype.sort.call({length: 2**53 - 1}, (a, b) => a - b)",
           "Array.prototype.sort.call(new Proxy({length: 2**32}, {}))",
           "const a = []; a[2**32 - 2] = 1; a.sort()",
           "const a = []; a[2**32 - 2] = 1; JSON.stringify({x: 1}, a)",
           "JSON.stringify([1], new Array(2**32 - 1))",
           "'x'.repeat(2**28).split('')",
       }) {
    SCOPED_TRACE(code);
    const auto start = std::chrono::steady_clock::now();
    auto ended = eval_in(
        sandbox, std::string("try { ") + code + "; 'no error' } catch (e) { e.constructor.name }");
    ASSERT_TRUE(ended.ok()) << ended.message;
    EXPECT_EQ(ended.value(), "\"RangeError\"");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  }
  expect_still_usable(sandbox);
}

TEST(SortAndStringifyGuards, OrdinaryCallsBehaveAsBefore) {
  Sandbox sandbox(testing::quick());
  auto ended =
      eval_in(sandbox,
              "const o = {length: 3, 0: 'c', 1: 'a', 2: 'b'};"
              "Array.prototype.sort.call(o);"
              "[[3, 1, 2].sort(), [3, 1, 10].sort((a, b) => b - a), [o[0], o[1], o[2]],"
              " JSON.stringify({a: 1, b: 2, c: 3}, ['a', 'c']),"
              " JSON.stringify({a: [1]}, null, 2), JSON.stringify({a: 1}, (k, v) => v),"
              " 'abc'.split(''), 'a,b'.split(','), 'abc'.split('', 2),"
              " [].sort.name, [].sort.length, JSON.stringify.name, JSON.stringify.length,"
              " ''.split.name, ''.split.length,"
              " (() => { try { [1].sort(1); } catch (e) { return e.constructor.name; } })()]");
  ASSERT_TRUE(ended.ok()) << ended.message;
  EXPECT_EQ(ended.value(),
            R"([[1,2,3],[10,3,1],["a","b","c"],"{\"a\":1,\"c\":3}","{\n  \"a\": [\n    1\n  ]\n}",)"
            R"("{\"a\":1}",["a","b","c"],["a","b"],["a","b"],"sort",1,"stringify",3,)"
            R"("split",2,"TypeError"])");
}

TEST(IntlSegmenterGuard, SegmentsStillIterateAsBefore) {
  Sandbox sandbox(testing::quick());
  auto ended = eval_in(sandbox,
                       "const seg = new Intl.Segmenter('en', {granularity: 'word'});"
                       "const parts = [...seg.segment('ab cd')].map(s => [s.segment, s.index,"
                       " s.isWordLike]);"
                       "const again = Array.from(seg.segment('x y'), s => s.segment);"
                       "[parts, again, seg.segment('ab cd').containing(3).segment,"
                       " Intl.Segmenter.prototype.segment.name]");
  ASSERT_TRUE(ended.ok()) << ended.message;
  EXPECT_EQ(ended.value(),
            R"([[["ab",0,true],[" ",2,false],["cd",3,true]],["x"," ","y"],"cd","segment"])");
}

}  // namespace
}  // namespace corral::sandbox
