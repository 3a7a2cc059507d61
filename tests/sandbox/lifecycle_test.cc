// Lifecycle anchors (kobako B-01..B-06, B-35, B-61, E-04..E-06, E-39)
// translated to JavaScript.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <thread>

#include "sandbox_test_util.hpp"

namespace corral::sandbox {
namespace {

using testing::eval_in;
using testing::quick;

TEST(Lifecycle, B01_DefaultsMatchTheContract) {
  Options options;
  EXPECT_EQ(options.timeout, std::chrono::seconds(60));
  EXPECT_EQ(*options.memory_limit, std::uint64_t{64} << 20);
  EXPECT_EQ(*options.stdout_limit, std::uint64_t{1} << 20);
  EXPECT_EQ(*options.stderr_limit, std::uint64_t{1} << 20);
  EXPECT_EQ(*options.max_tool_calls, 10'000u);
  EXPECT_EQ(options.profile, Profile::hermetic);
  Sandbox sandbox;  // constructing runs nothing
  EXPECT_FALSE(sandbox.last_run_trapped());
}

TEST(Lifecycle, B01_EveryCapAcceptsNone) {
  Options options;
  options.timeout.reset();
  options.memory_limit.reset();
  options.stdout_limit.reset();
  options.stderr_limit.reset();
  options.max_tool_calls.reset();
  Sandbox sandbox(options);
  auto ended = eval_in(sandbox, "console.log('x'.repeat(3 << 20)); 1");
  ASSERT_TRUE(ended.ok()) << ended.message;
  EXPECT_EQ(ended.execution->stdout_text().size(), (3u << 20) + 1);
}

TEST(Lifecycle, E39_InvalidOptionsThrowNamingTheOption) {
  auto expect_invalid = [](Options options, const char* name) {
    try {
      Sandbox sandbox(options);
      ADD_FAILURE() << name << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  };
  Options o;
  o.timeout = std::chrono::milliseconds(0);
  expect_invalid(o, "timeout");
  o.timeout = std::chrono::milliseconds(-1);
  expect_invalid(o, "timeout");
  o.timeout = std::chrono::milliseconds::min();
  expect_invalid(o, "timeout");
  o = Options{};
  o.memory_limit = 0;
  expect_invalid(o, "memory_limit");
  o = Options{};
  o.stdout_limit = 0;
  expect_invalid(o, "stdout_limit");
  o = Options{};
  o.stderr_limit = 0;
  expect_invalid(o, "stderr_limit");
  o = Options{};
  o.profile = static_cast<Profile>(7);
  expect_invalid(o, "profile");
  EXPECT_THROW(parse_profile("paranoid"), std::invalid_argument);
  EXPECT_EQ(parse_profile("permissive"), Profile::permissive);
}

TEST(Lifecycle, B02_EvalReturnsFrozenExecutionWithLastExpression) {
  Sandbox sandbox(quick());
  const Execution e = sandbox.eval("const x = {a: [1, 'two', true, null]}; x");
  EXPECT_EQ(e.value(), R"({"a":[1,"two",true,null]})");
  EXPECT_FALSE(e.failed());
  EXPECT_FALSE(e.exit_code().has_value());
}

TEST(Lifecycle, B03_EachRunGetsAFreshContext) {
  Sandbox sandbox(quick());
  sandbox.eval(
      "globalThis.leak = 1; var v = 2; Array.prototype.evil = () => 'pwned';"
      "Object.prototype.polluted = true; JSON.parse = () => 'hijacked'; 0");
  auto after = eval_in(sandbox,
                       "[typeof leak, typeof v, typeof [].evil, ({}).polluted === undefined,"
                       " JSON.parse('1')]");
  ASSERT_TRUE(after.ok()) << after.message;
  EXPECT_EQ(after.value(), R"(["undefined","undefined","undefined",true,1])");
}

TEST(Lifecycle, B03_IsolationHoldsAfterAFailedRun) {
  Sandbox sandbox(quick());
  EXPECT_FALSE(eval_in(sandbox, "globalThis.leak = 1; throw new Error('boom')").ok());
  EXPECT_EQ(sandbox.eval("typeof leak").value(), R"("undefined")");
}

// Between runs the sandbox builds the next run's context in the background
// (the spare). A run that finds it ready must see exactly what a run that
// builds its own context sees, whatever the previous run did or how it ended.
TEST(Lifecycle, B03_TheContextBuiltWhileIdleIsFresh) {
  for (Profile profile : {Profile::hermetic, Profile::permissive}) {
    Options options = quick(0.5);
    options.profile = profile;
    Sandbox sandbox(options);
    const char* probe =
        "[typeof leak, typeof [].evil, ({}).polluted === undefined, JSON.parse('1'),"
        " Math.random === Math.random, typeof console.log, typeof FinalizationRegistry]";
    const std::string expected = sandbox.eval(probe).value();
    EXPECT_EQ(expected, R"(["undefined","undefined",true,1,true,"function","undefined"])");
    const char* polluters[] = {
        "globalThis.leak = 1; Array.prototype.evil = 1; Object.prototype.polluted = 1;"
        " JSON.parse = () => 0; console.log = null; 0",
        "globalThis.leak = 1; Object.prototype.polluted = 1; while (true) {}",
        "globalThis.leak = 1; Object.prototype.polluted = 1; throw new Error('boom')",
        "Object.prototype.polluted = 1; new Promise(() => {})",
    };
    for (const char* polluter : polluters) {
      eval_in(sandbox, polluter);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the spare is built
      EXPECT_EQ(sandbox.eval(probe).value(), expected) << polluter;
      EXPECT_EQ(sandbox.eval(probe).value(), expected) << polluter << " (back to back)";
    }
  }
}

TEST(Lifecycle, B03_HermeticRandomRestartsInEveryContext) {
  Sandbox sandbox(quick());
  const std::string first = sandbox.eval("[Math.random(), Math.random()]").value();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(sandbox.eval("[Math.random(), Math.random()]").value(), first);
  EXPECT_EQ(sandbox.eval("[Math.random(), Math.random()]").value(), first);
}

// memory_peak counts what the run holds past its fresh context, whether the
// run built that context itself (the first run) or found it ready.
TEST(Lifecycle, B35_MemoryIsCountedPastTheFreshContext) {
  Sandbox sandbox(quick());
  const char* code = "const a = []; for (let i = 0; i < 1000; i++) a.push({i}); a.length";
  const std::uint64_t built_by_the_run = sandbox.eval(code).usage().memory_peak;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const std::uint64_t found_ready = sandbox.eval(code).usage().memory_peak;
  EXPECT_GT(built_by_the_run, 0u);
  EXPECT_LT(built_by_the_run, std::uint64_t{1} << 20);
  EXPECT_LT(found_ready, std::uint64_t{1} << 20);
  const auto difference = static_cast<std::int64_t>(built_by_the_run - found_ready);
  EXPECT_LT(std::abs(difference), std::int64_t{16} << 10);
}

// No guest JavaScript may run between runs, where no watchdog would stop it.
// A FinalizationRegistry's callback would (from a V8 task after its run), so
// guests get none; a run that tries the pattern is answered, and so is the
// next one.
TEST(Lifecycle, NoGuestCodeRunsBetweenRuns) {
  Sandbox sandbox(quick(1.0));
  auto tried = eval_in(sandbox,
                       "const R = globalThis.FinalizationRegistry;"
                       "if (R) { const r = new R(() => { while (true) {} });"
                       "  for (let i = 0; i < 1000; i++) r.register({i}, i); }"
                       "const keep = []; for (let i = 0; i < 200000; i++) keep.push({i});"
                       "typeof R");
  ASSERT_TRUE(tried.ok()) << tried.message;
  EXPECT_EQ(tried.value(), R"("undefined")");
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(sandbox.eval("const a = []; for (let i = 0; i < 100000; i++) a.push({i}); 2").value(),
              "2");
  }
}

TEST(Lifecycle, B04_OutputCapTruncatesWithoutFailing) {
  Options options = quick();
  options.stdout_limit = 10;
  options.stderr_limit = 5;
  Sandbox sandbox(options);
  const Execution e = sandbox.eval(
      "for (let i = 0; i < 100; i++) console.log('line ' + i); console.error('a long error'); 7");
  EXPECT_EQ(e.value(), "7");
  EXPECT_EQ(e.stdout_text(), "line 0\nlin");
  EXPECT_TRUE(e.stdout_truncated());
  EXPECT_EQ(e.stderr_text(), "a lon");
  EXPECT_TRUE(e.stderr_truncated());
  EXPECT_GT(e.usage().output_bytes, 100u);
}

TEST(Lifecycle, B04_TruncationNeverSplitsACharacter) {
  Options options = quick();
  options.stdout_limit = 4;
  Sandbox sandbox(options);
  const Execution e = sandbox.eval("console.log('aé€'); 1");  // 1 + 2 + 3 bytes
  EXPECT_EQ(e.stdout_text(), "aé");
  EXPECT_TRUE(e.stdout_truncated());
}

TEST(Lifecycle, B04_OutputIsKeptOnEveryOutcome) {
  Sandbox sandbox(quick(0.2));
  auto ended = eval_in(sandbox, "console.log('before'); console.warn('careful'); while (true) {}");
  ASSERT_EQ(ended.code, FailureCode::timeout);
  EXPECT_EQ(ended.execution->stdout_text(), "before\n");
  EXPECT_EQ(ended.execution->stderr_text(), "careful\n");
}

TEST(Lifecycle, B05_ARunThatWroteNothingHasEmptyOutput) {
  Sandbox sandbox(quick());
  const Execution e = sandbox.eval("1");
  EXPECT_EQ(e.stdout_text(), "");
  EXPECT_EQ(e.stderr_text(), "");
  EXPECT_FALSE(e.stdout_truncated());
  EXPECT_FALSE(e.stderr_truncated());
}

TEST(Lifecycle, B06_NoExpressionGivesNull) {
  Sandbox sandbox(quick());
  EXPECT_EQ(sandbox.eval("").value(), "null");
  EXPECT_EQ(sandbox.eval("let x = 1;").value(), "null");
  EXPECT_EQ(sandbox.eval("undefined").value(), "null");
  EXPECT_EQ(sandbox.eval("null").value(), "null");
}

TEST(Lifecycle, B06_ValuesCrossAsJson) {
  Sandbox sandbox(quick());
  EXPECT_EQ(sandbox.eval("50e6").value(), "50000000");
  EXPECT_EQ(sandbox.eval("0.1 + 0.2").value(), "0.30000000000000004");
  EXPECT_EQ(sandbox.eval("-0").value(), "0");
  EXPECT_EQ(sandbox.eval("1e300").value(), "1e+300");
  EXPECT_EQ(sandbox.eval("'quote\" slash\\\\ nl\\n'").value(), R"("quote\" slash\\ nl\n")");
  EXPECT_EQ(sandbox.eval("new Date(0)").value(), R"("1970-01-01T00:00:00.000Z")");
  EXPECT_EQ(sandbox.eval("({a: undefined, b: 1})").value(), R"({"b":1})");
  EXPECT_EQ(sandbox.eval("[undefined, 1]").value(), "[null,1]");
  EXPECT_EQ(sandbox.eval("({toJSON() { return 'custom'; }})").value(), R"("custom")");
  EXPECT_EQ(sandbox.eval("new String('boxed')").value(), R"("boxed")");
}

TEST(Lifecycle, E06_ValuesWithoutJsonFormAreUnserializable) {
  Sandbox sandbox(quick());
  for (const char* code :
       {"(function f() {})", "Symbol('s')", "10n", "NaN", "Infinity", "const a = {}; a.self = a; a",
        "new Map([[1, 2]])", "new Set([1])", "new Uint8Array(2)", "/re/", "({f() {}})",
        "[Symbol.iterator]", "Promise.resolve(1).then(() => () => 1)"}) {
    auto ended = eval_in(sandbox, code);
    EXPECT_EQ(ended.code, FailureCode::unserializable_value) << code << ": " << ended.message;
  }
  auto ended = eval_in(sandbox, "({list: [1, {fn: () => 1}]})");
  EXPECT_NE(ended.message.find("value.list[1].fn is a function"), std::string::npos)
      << ended.message;
}

TEST(Lifecycle, E04_UncaughtGuestExceptionIsGuestErrorWithStack) {
  Sandbox sandbox(quick());
  auto ended = eval_in(sandbox, "function f() { throw new TypeError('bad thing'); }\nf()");
  ASSERT_EQ(ended.code, FailureCode::guest_error);
  EXPECT_NE(ended.message.find("TypeError: bad thing"), std::string::npos) << ended.message;
  EXPECT_NE(ended.message.find("(eval):1"), std::string::npos) << ended.message;
  auto thrown = eval_in(sandbox, "throw 42");
  ASSERT_EQ(thrown.code, FailureCode::guest_error);
  EXPECT_NE(thrown.message.find("Uncaught 42"), std::string::npos) << thrown.message;
  auto rejected = eval_in(sandbox, "Promise.reject(new RangeError('nope'))");
  ASSERT_EQ(rejected.code, FailureCode::guest_error);
  EXPECT_NE(rejected.message.find("RangeError: nope"), std::string::npos) << rejected.message;
}

TEST(Lifecycle, E04_HostileToStringOnThrownValueIsContained) {
  Sandbox sandbox(quick(0.3));
  auto ended = eval_in(sandbox, "throw { toString() { while (true) {} } }");
  EXPECT_EQ(ended.code, FailureCode::timeout) << ended.message;
  auto throws = eval_in(sandbox, "throw { toString() { throw new Error('inner'); } }");
  EXPECT_EQ(throws.code, FailureCode::guest_error) << throws.message;
}

TEST(Lifecycle, E05_SyntaxErrorIsCompileErrorWithLocation) {
  Sandbox sandbox(quick());
  auto ended = eval_in(sandbox, "let a = 1;\nlet b = ;");
  ASSERT_EQ(ended.code, FailureCode::compile_error);
  EXPECT_NE(ended.message.find("SyntaxError"), std::string::npos) << ended.message;
  EXPECT_NE(ended.message.find("(eval):2"), std::string::npos) << ended.message;
  ASSERT_NE(ended.execution, nullptr);
  EXPECT_TRUE(ended.execution->failed());
}

TEST(Lifecycle, PromiseThatCanNeverSettleFailsAtOnce) {
  Sandbox sandbox(quick(30));
  auto ended = eval_in(sandbox, "new Promise(() => {})");
  ASSERT_EQ(ended.code, FailureCode::guest_error);
  EXPECT_LT(ended.execution->usage().wall_time, 5.0);
}

TEST(Lifecycle, B35_UsageIsPopulatedOnEveryOutcome) {
  Sandbox sandbox(quick(0.2));
  const Execution ok = sandbox.eval("let s = 0; for (let i = 0; i < 1e6; i++) s += i; s");
  EXPECT_GT(ok.usage().wall_time, 0);
  EXPECT_GT(ok.usage().cpu_time, 0);
  auto failed = eval_in(sandbox, "while (true) {}");
  EXPECT_GE(failed.execution->usage().wall_time, 0.2);
  EXPECT_GT(failed.execution->usage().cpu_time, 0);
}

TEST(Lifecycle, B61_FailedExecutionIsDistinguishableFromNullValue) {
  Sandbox sandbox(quick());
  const Execution nothing = sandbox.eval("null");
  EXPECT_FALSE(nothing.failed());
  auto failed = eval_in(sandbox, "throw new Error('x')");
  EXPECT_TRUE(failed.execution->failed());
  EXPECT_EQ(failed.execution->value(), "null");
}

TEST(Lifecycle, B61_PreflightRejectionCarriesNoExecution) {
  Sandbox sandbox(quick());
  EXPECT_THROW(sandbox.run("not an identifier"), std::invalid_argument);
  EXPECT_THROW(sandbox.run("main", "{\"not\": \"an array\"}"), std::invalid_argument);
  EXPECT_THROW(sandbox.run("main", "[1,"), std::invalid_argument);
}

}  // namespace
}  // namespace corral::sandbox
