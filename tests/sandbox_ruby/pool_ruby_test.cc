// Ruby guests through the worker pool: real `corral worker` processes, where
// Ruby runs inline and the pool is the timeout's backstop.
#include <gtest/gtest.h>

#include <future>

#include "corral/pool.hpp"

namespace corral::pool {
namespace {

Options pool_options() {
  Options options;
  options.worker_command = {CORRAL_BINARY, "worker"};
  options.max_workers = 1;
  options.grace = std::chrono::milliseconds(300);
  return options;
}

Request ruby_request(std::string code) {
  Request request;
  request.shape = Request::Shape::eval;
  request.code = std::move(code);
  request.limits.language = sandbox::Language::ruby;
  request.limits.timeout = std::chrono::seconds(5);
  return request;
}

TEST(RubyPool, RunsRubyAndJavascriptSideBySide) {
  WorkerPool pool(pool_options());
  Outcome ruby = pool.execute(ruby_request("puts RUBY_ENGINE; [1, 2].map { |x| x * 21 }"));
  ASSERT_TRUE(ruby.ok()) << ruby.failure().message;
  EXPECT_EQ(ruby.execution().value(), "[21,42]");
  EXPECT_EQ(ruby.execution().stdout_text(), "mruby\n");
  Request js;
  js.code = "async () => 6 * 7";
  Outcome javascript = pool.execute(std::move(js));
  ASSERT_TRUE(javascript.ok()) << javascript.failure().message;
  EXPECT_EQ(javascript.execution().value(), "42");
}

TEST(RubyPool, ToolCallsReachTheDispatcherAsCodemodeConstants) {
  WorkerPool pool(pool_options());
  Request request = ruby_request("Codemode::Math.add(a: 1, b: 2)['sum'] * 10");
  request.tools = {"math.add"};
  request.dispatcher = [](const std::string& name, std::string args, ToolAnswer answer) {
    EXPECT_EQ(name, "math.add");
    EXPECT_EQ(args, R"({"a":1,"b":2})");
    answer.resolve(R"({"sum":3})");
  };
  Outcome outcome = pool.execute(std::move(request));
  ASSERT_TRUE(outcome.ok()) << outcome.failure().message;
  EXPECT_EQ(outcome.execution().value(), "30");
}

TEST(RubyPool, ErrorsAndMemoryLimitKeepTheirCodes) {
  WorkerPool pool(pool_options());
  Outcome error = pool.execute(ruby_request("raise ArgumentError, 'no'"));
  ASSERT_FALSE(error.ok());
  EXPECT_EQ(error.failure().code, FailureCode::guest_error);
  EXPECT_NE(error.failure().message.find("no (ArgumentError)"), std::string::npos);
  Request bomb = ruby_request("s = 'x'; loop { s += s }");
  bomb.limits.memory_limit = std::uint64_t{16} << 20;
  Outcome memory = pool.execute(std::move(bomb));
  ASSERT_FALSE(memory.ok());
  EXPECT_EQ(memory.failure().code, FailureCode::memory_limit) << memory.failure().message;
  Outcome after = pool.execute(ruby_request(":alive"));
  ASSERT_TRUE(after.ok()) << after.failure().message;
}

TEST(RubyPool, ALoopingRubyGuestIsATimeoutAndTheWorkerIsReplaced) {
  WorkerPool pool(pool_options());
  Request request = ruby_request("loop {}");
  request.limits.timeout = std::chrono::milliseconds(200);
  Outcome outcome = pool.execute(std::move(request));
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.failure().code, FailureCode::timeout) << outcome.failure().message;
  Outcome after = pool.execute(ruby_request("1 + 1"));
  ASSERT_TRUE(after.ok()) << after.failure().message;
  EXPECT_EQ(after.execution().value(), "2");
}

TEST(RubyPool, CancelEndsALoopingRubyGuest) {
  WorkerPool pool(pool_options());
  ASSERT_TRUE(pool.execute(ruby_request(":warm")).ok());
  std::promise<Outcome> settled;
  std::promise<void> started;
  Request request = ruby_request("Sig.started; loop {}");
  request.limits.timeout.reset();
  request.tools = {"started"};
  request.code = "Codemode.started; loop {}";
  request.dispatcher = [&](const std::string&, std::string, ToolAnswer answer) {
    answer.resolve("null");
    started.set_value();
  };
  const Ticket ticket = pool.submit(
      std::move(request), [&](Outcome outcome) { settled.set_value(std::move(outcome)); });
  started.get_future().wait();
  pool.cancel(ticket);
  Outcome outcome = settled.get_future().get();
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.failure().code, FailureCode::cancelled) << outcome.failure().message;
  Outcome after = pool.execute(ruby_request(":alive"));
  ASSERT_TRUE(after.ok()) << after.failure().message;
}

}  // namespace
}  // namespace corral::pool
