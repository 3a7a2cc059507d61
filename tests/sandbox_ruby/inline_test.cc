// Ruby guests run inline (how a locked-down pool worker runs them).
#include <condition_variable>
#include <mutex>
#include <optional>

#include "sandbox/hosted.hpp"
#include "sandbox_ruby/test_util.hpp"

namespace corral::sandbox::testing {
namespace {

// A Ruby Sandbox whose guests run inline, as a pooled worker makes them.
std::unique_ptr<Sandbox> inline_sandbox(const Options& options, StuckRun on_stuck = {}) {
  return Hosted::make(with_ruby(options), Hosting{false, std::move(on_stuck)});
}

TEST(RubyInline, RunsToolsSnippetsAndLimitsWithoutAHelper) {
  Options options = ruby_options();
  options.memory_limit = std::uint64_t{8} << 20;
  std::unique_ptr<Sandbox> sandbox = inline_sandbox(options);
  sandbox->bind("KV.get", [](std::string_view args) { return std::string(args); });
  sandbox->preload("Lib", "def twice(x) = x * 2");
  Execution e = sandbox->eval("puts 'hi'; twice(KV.get(21))");
  EXPECT_EQ(e.value(), "42");
  EXPECT_EQ(e.stdout_text(), "hi\n");
  auto caught =
      expect_failure(FailureCode::memory_limit, [&] { sandbox->eval("s = 'x'; loop { s += s }"); });
  EXPECT_LE(caught.execution->usage().memory_peak, std::uint64_t{8} << 20);
  expect_failure(FailureCode::guest_error, [&] { sandbox->eval("raise 'x'"); });
  EXPECT_EQ(sandbox->eval("$x.nil?").value(), "true");
}

// Inline, a cancel that came first means no Ruby runs at all: once it
// does, only the stuck handler (the worker's exit) could end it.
TEST(RubyInline, ACancelBeforeTheRunStartsRunsNoRuby) {
  Options options = ruby_options();
  options.timeout = std::nullopt;
  std::unique_ptr<Sandbox> sandbox = inline_sandbox(options);
  Hosted::cancel_including_next(*sandbox);
  auto caught =
      expect_failure(FailureCode::cancelled, [&] { sandbox->eval("puts 'ran'; loop {}"); });
  EXPECT_EQ(caught.execution->stdout_text(), "");
  EXPECT_EQ(sandbox->eval("6 * 7").value(), "42");
}

TEST(RubyInline, AnAsyncToolWaitEndsAtTheDeadline) {
  Options options = ruby_options();
  options.timeout = std::chrono::milliseconds(200);
  std::unique_ptr<Sandbox> sandbox = inline_sandbox(options);
  std::vector<ToolReply> replies;
  sandbox->bind_async("Slow.never",
                      [&](std::string, ToolReply reply) { replies.push_back(reply); });
  expect_failure(FailureCode::timeout, [&] { sandbox->eval("Slow.never"); });
  EXPECT_EQ(sandbox->eval("1").value(), "1");
}

}  // namespace
}  // namespace corral::sandbox::testing

namespace corral::sandbox::testing {
namespace {

// The stuck handler is how a pooled worker ends a Ruby run it cannot
// interrupt. Here it records the failure and lets the guest finish.
TEST(RubyInline, ADeadlineInRubyCodeIsHandedToTheStuckHandler) {
  Options options = ruby_options();
  options.timeout = std::chrono::milliseconds(100);
  std::mutex mutex;
  std::condition_variable reported;
  std::optional<Failure> stuck;
  std::unique_ptr<Sandbox> sandbox = inline_sandbox(options, [&](const Failure& failure) {
    std::lock_guard lock(mutex);
    stuck = failure;
    reported.notify_all();
  });
  sandbox->bind("Sig.wait", [&](std::string_view) {
    std::unique_lock lock(mutex);
    reported.wait(lock, [&] { return stuck.has_value(); });
    return std::string("null");
  });
  // Busy in Ruby past the deadline, then it waits (in a tool) for the report.
  EXPECT_THROW(sandbox->eval("puts 'busy'; t = 0; 3_000_000.times { t += 1 }; Sig.wait; t"),
               TimeoutError);
  ASSERT_TRUE(stuck.has_value());
  EXPECT_EQ(stuck->code, FailureCode::timeout);
  ASSERT_TRUE(stuck->execution);
  EXPECT_EQ(stuck->execution->stdout_text(), "busy\n");
}

}  // namespace
}  // namespace corral::sandbox::testing
