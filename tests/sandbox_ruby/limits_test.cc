// Ruby guests: timeout, memory limit, output caps, usage on every outcome,
// the hermetic profile.
#include <fstream>
#include <string>
#include <thread>

#include "sandbox/hosted.hpp"
#include "sandbox_ruby/test_util.hpp"

namespace corral::sandbox::testing {
namespace {

Options short_timeout() {
  Options options = ruby_options();
  options.timeout = std::chrono::milliseconds(300);
  return options;
}

TEST(RubyTimeout, E19_StopsLoopAndTheSandboxStaysUsable) {
  RubySandbox sandbox(short_timeout());
  auto caught =
      expect_failure(FailureCode::timeout, [&] { sandbox.eval("puts 'before'\nloop {}"); });
  EXPECT_EQ(caught.execution->stdout_text(), "before\n");
  EXPECT_GE(caught.execution->usage().wall_time, 0.3);
  EXPECT_TRUE(sandbox.last_run_trapped());
  EXPECT_EQ(sandbox.eval("1 + 1").value(), "2");
}

TEST(RubyTimeout, E19_StopsWhileTrueAndRescueEverything) {
  RubySandbox sandbox(short_timeout());
  expect_failure(FailureCode::timeout, [&] { sandbox.eval("while true; end"); });
  expect_failure(FailureCode::timeout, [&] {
    sandbox.eval("begin; loop {}; rescue Exception; retry; ensure; loop {}; end");
  });
}

TEST(RubyTimeout, E19_ToolTimeCountsAndAnAsyncWaitEndsAtTheDeadline) {
  RubySandbox sandbox(short_timeout());
  std::vector<ToolReply> never;
  sandbox.bind_async("Slow.never", [&](std::string, ToolReply reply) { never.push_back(reply); });
  expect_failure(FailureCode::timeout, [&] { sandbox.eval("Slow.never"); });
  EXPECT_FALSE(never.at(0).resolve("1"));  // refused: the run is over
}

TEST(RubyTimeout, CancelStopsARunFromAnotherThread) {
  Options options = ruby_options();
  options.timeout = std::nullopt;
  RubySandbox sandbox(options);
  std::atomic<bool> started{false};
  sandbox.bind("Sig.started", [&](std::string_view) {
    started = true;
    return std::string("null");
  });
  std::thread canceller([&] {
    while (!started) std::this_thread::yield();
    sandbox.cancel();
  });
  expect_failure(FailureCode::cancelled, [&] { sandbox.eval("Sig.started; loop {}"); });
  canceller.join();
  EXPECT_EQ(sandbox.eval(":after").value(), "\"after\"");
}

TEST(RubyTimeout, CancelIncludingNextStopsARunThatHadNotStartedYet) {
  Options options = ruby_options();
  options.timeout = std::nullopt;
  RubySandbox sandbox(options);
  Hosted::cancel_including_next(sandbox);
  expect_failure(FailureCode::cancelled, [&] { sandbox.eval("loop {}"); });
  EXPECT_EQ(sandbox.eval(":after").value(), "\"after\"");
  Hosted::cancel_including_next(sandbox);
  Hosted::clear_pending_cancel(sandbox);
  EXPECT_EQ(sandbox.eval("1 + 2").value(), "3");
}

Options small_memory() {
  Options options = ruby_options();
  options.memory_limit = std::uint64_t{8} << 20;
  return options;
}

// `gradual`: the run grew step by step, so its peak came close to the limit
// (one huge request is refused before anything is held).
void expect_memory_limit(RubySandbox& sandbox, const char* code, bool gradual = true) {
  SCOPED_TRACE(code);
  auto caught = expect_failure(FailureCode::memory_limit, [&] { sandbox.eval(code); });
  ASSERT_TRUE(caught.execution);
  EXPECT_LE(caught.execution->usage().memory_peak, std::uint64_t{8} << 20);
  if (gradual) {
    EXPECT_GT(caught.execution->usage().memory_peak, std::uint64_t{4} << 20);
  }
  EXPECT_EQ(sandbox.eval("[1, 2].inject(:+)").value(), "3");
}

TEST(RubyMemory, E20_ArraysStringsAndHashes) {
  RubySandbox sandbox(small_memory());
  expect_memory_limit(sandbox, "a = []; loop { a << 'x' * 100 }");
  expect_memory_limit(sandbox, "s = 'x'; loop { s += s }");
  expect_memory_limit(sandbox, "h = {}; i = 0; loop { h[i] = [i]; i += 1 }");
  expect_memory_limit(sandbox, "Array.new(100_000_000, 0)", false);
  expect_memory_limit(sandbox, "'x' * 500_000_000", false);
}

TEST(RubyMemory, E20_RescuingNoMemoryErrorDoesNotHelp) {
  RubySandbox sandbox(small_memory());
  expect_memory_limit(sandbox,
                      "a = []; loop { begin; a << 'y' * 10_000; rescue Exception; retry; end }");
}

long host_peak_kb() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

// mruby paces its GC by objects made, not bytes: a loop that keeps 100 KB
// live made garbage strings past the limit before a GC ran, and failed. A
// full GC now comes before the limit is declared.
TEST(RubyMemory, GarbageIsCollectedBeforeTheLimitIsDeclared) {
  RubySandbox sandbox(small_memory());  // 8 MiB
  // 200 MB made in all, 100 KB kept plus one 100 KB string at a time.
  Execution strings = sandbox.eval(
      "keep = 'k' * 100_000; n = 0\n"
      "2_000.times { s = 'x' * 100_000; n += s.size }\n"
      "[n, keep.size]");
  EXPECT_EQ(strings.value(), "[200000000,100000]");
  EXPECT_LE(strings.usage().memory_peak, std::uint64_t{8} << 20);
  Execution arrays =
      sandbox.eval("keep = []; 500.times { |i| a = Array.new(50_000, i); keep = [a.size] }; keep");
  EXPECT_EQ(arrays.value(), "[50000]");
  Execution hashes = sandbox.eval(
      "n = 0; 300.times { h = {}; 2_000.times { |i| h[i] = 'v' * 20 }; n += h.size }; n");
  EXPECT_EQ(hashes.value(), "600000");
}

TEST(RubyMemory, AGrowingLoopStillFailsQuicklyAndTheHostHoldsNothingOfIt) {
  RubySandbox sandbox(small_memory());
  ASSERT_EQ(sandbox.eval("1").value(), "1");
  const long host_before = host_peak_kb();
  const auto start = std::chrono::steady_clock::now();
  expect_memory_limit(sandbox, "a = []; loop { a << 'x' * 100_000 }");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  // The guest's memory is the helper's; the host grows by its frames only.
  EXPECT_LT(host_peak_kb() - host_before, 16 * 1024);
  // A guest that turns the GC off gets no collection: the limit holds.
  expect_memory_limit(sandbox, "GC.disable; 2_000.times { 'x' * 100_000 }");
}

TEST(RubyMemory, B35_UsageIsPopulatedOnEveryOutcome) {
  RubySandbox sandbox(ruby_options());
  Execution ok = sandbox.eval("a = Array.new(10_000) { |i| i.to_s }; puts 'x'; a.size");
  EXPECT_GT(ok.usage().memory_peak, 100'000u);
  EXPECT_GT(ok.usage().wall_time, 0);
  EXPECT_EQ(ok.usage().output_bytes, 2u);
  auto failed =
      expect_failure(FailureCode::guest_error, [&] { sandbox.eval("puts 'y'; raise 'x'"); });
  EXPECT_EQ(failed.execution->stdout_text(), "y\n");
  EXPECT_TRUE(failed.execution->failed());
  EXPECT_EQ(failed.execution->value(), "null");
  EXPECT_GT(failed.execution->usage().wall_time, 0);
}

TEST(RubyOutput, B04_OutputCapTruncatesWithoutFailing) {
  Options options = ruby_options();
  options.stdout_limit = 10;
  options.stderr_limit = 4;
  RubySandbox sandbox(options);
  Execution e = sandbox.eval("20.times { puts 'abcdef' }; $stderr.print 'é' * 10; :done");
  EXPECT_EQ(e.value(), "\"done\"");
  EXPECT_EQ(e.stdout_text(), "abcdef\nabc");
  EXPECT_TRUE(e.stdout_truncated());
  EXPECT_EQ(e.stderr_text(), "éé");  // never half a character
  EXPECT_TRUE(e.stderr_truncated());
  EXPECT_EQ(e.usage().output_bytes, 140u + 20u);
}

TEST(RubyOutput, BytesThatAreNotUtf8ReadAsReplacementAndAreReported) {
  RubySandbox sandbox(ruby_options());
  Execution e = sandbox.eval("puts \"a\\xffb\"; $stderr.print \"\\xed\\xa0\\x80\"; 1");
  EXPECT_EQ(e.stdout_text(), "a\uFFFDb\n");
  EXPECT_EQ(e.stderr_text(), "\uFFFD\uFFFD\uFFFD");
  EXPECT_TRUE(e.stdout_replaced());
  EXPECT_TRUE(e.stderr_replaced());
  EXPECT_EQ(e.usage().output_bytes, 7u);  // what the guest wrote, before replacement
  Execution clean = sandbox.eval("puts 'caf\u00e9'; 1");
  EXPECT_FALSE(clean.stdout_replaced());
  // A failure's message is made UTF-8 too: the guest chose those bytes.
  auto raised =
      expect_failure(FailureCode::guest_error, [&] { sandbox.eval("raise \"bad \\xff\""); });
  EXPECT_NE(raised.message.find("bad \uFFFD"), std::string::npos) << raised.message;
}

TEST(RubyOutput, ACapInsideACharacterCutsBeforeIt) {
  Options options = ruby_options();
  options.stdout_limit = 5;
  RubySandbox sandbox(options);
  Execution e = sandbox.eval("$stdout.print \"abcd\\u20ac\"; 1");
  EXPECT_EQ(e.stdout_text(), "abcd");
  EXPECT_TRUE(e.stdout_truncated());
  EXPECT_FALSE(e.stdout_replaced());
}

TEST(RubyOutput, B05_ARunThatWroteNothingHasEmptyOutput) {
  RubySandbox sandbox(ruby_options());
  Execution e = sandbox.eval("1");
  EXPECT_EQ(e.stdout_text(), "");
  EXPECT_EQ(e.stderr_text(), "");
  EXPECT_FALSE(e.stdout_truncated());
  EXPECT_FALSE(e.stderr_truncated());
}

TEST(RubyOutput, B04_OutputIsKeptOnTraps) {
  Options options = small_memory();
  options.timeout = std::chrono::milliseconds(300);
  RubySandbox sandbox(options);
  auto timed_out =
      expect_failure(FailureCode::timeout, [&] { sandbox.eval("print 'a'; loop {}"); });
  EXPECT_EQ(timed_out.execution->stdout_text(), "a");
  auto memory = expect_failure(FailureCode::memory_limit, [&] {
    sandbox.eval("$stderr.print 'b'; s = 'x'; loop { s += s }");
  });
  EXPECT_EQ(memory.execution->stderr_text(), "b");
}

TEST(RubyProfile, B45_HermeticFreezesTheClockAndRandomness) {
  RubySandbox sandbox(ruby_options());
  const std::string code =
      "[Time.now.to_i, Time.new.to_i, rand(1000), Random.rand(1000), "
      "Random.new.rand(1000), [1, 2, 3, 4, 5].shuffle]";
  const std::string first = sandbox.eval(code).value();
  EXPECT_EQ(first.substr(0, 5), "[0,0,");
  EXPECT_EQ(sandbox.eval(code).value(), first);
  RubySandbox other(ruby_options());
  EXPECT_EQ(other.eval(code).value(), first);
}

TEST(RubyProfile, B54_PermissiveHasRealTimeAndEval) {
  Options options = ruby_options();
  options.profile = Profile::permissive;
  RubySandbox sandbox(options);
  EXPECT_EQ(sandbox.eval("Time.now.to_i > 1_700_000_000").value(), "true");
  EXPECT_EQ(sandbox.eval("eval('1 + 2')").value(), "3");
  RubySandbox hermetic(ruby_options());
  expect_failure(FailureCode::guest_error, [&] { hermetic.eval("eval('1 + 2')"); });
}

}  // namespace
}  // namespace corral::sandbox::testing
