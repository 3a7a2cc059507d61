// A Sandbox shared by threads: the turn a run waits for, re-entry from a
// tool, destruction while runs are in flight or waiting, and option values
// that would overflow the engines' clocks. Each case runs for JavaScript and
// for Ruby: the Sandbox, not the engine, holds these rules.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <future>
#include <limits>
#include <memory>
#include <thread>

#include "sandbox_test_util.hpp"

namespace corral::sandbox {
namespace {

using testing::ended;
using testing::Ended;

class SandboxThreads : public ::testing::TestWithParam<Language> {
 protected:
  Options options(double timeout_seconds = 10) const {
    Options o;
    o.language = GetParam();
    o.timeout = std::chrono::milliseconds(std::llround(timeout_seconds * 1000));
    return o;
  }
  bool ruby() const { return GetParam() == Language::ruby; }
  // Code that calls the bound tool at `path` (JS spelling) with {} and returns its value.
  std::string call(const char* js_path, const char* ruby_path) const {
    return ruby() ? std::string(ruby_path) + "({})"
                  : std::string("async () => ") + js_path + "({})";
  }
  std::string spin_forever() const { return ruby() ? "loop {}" : "while (true) {}"; }
  Ended run_in(Sandbox& sandbox, const std::string& code) const {
    return ended([&] { return ruby() ? sandbox.eval(code) : sandbox.execute(code); });
  }
};

TEST_P(SandboxThreads, DurationsThatWouldOverflowTheClockAreRefused) {
  const std::chrono::milliseconds year = std::chrono::hours(365 * 24);
  for (std::chrono::milliseconds too_long :
       {year + std::chrono::milliseconds(1),
        std::chrono::milliseconds(std::int64_t{10'000'000'000'000}),
        std::chrono::milliseconds::max()}) {
    Options o = options();
    o.timeout = too_long;
    EXPECT_THROW(Sandbox{o}, std::invalid_argument) << "timeout " << too_long.count();
    o = options();
    o.queue_timeout = too_long;
    EXPECT_THROW(Sandbox{o}, std::invalid_argument) << "queue_timeout " << too_long.count();
  }
  Options o = options();
  o.queue_timeout = std::chrono::milliseconds(0);
  EXPECT_THROW(Sandbox{o}, std::invalid_argument);
  o.timeout = year;  // the ceiling itself is fine
  o.queue_timeout = year;
  Sandbox sandbox(o);
  Ended e = run_in(sandbox, "1 + 1");
  ASSERT_TRUE(e.ok()) << e.message;  // and it does not time out at once
  EXPECT_EQ(e.value(), "2");
}

TEST_P(SandboxThreads, ASyncToolThatRunsCodeOnItsOwnSandboxIsRefused) {
  Sandbox sandbox(options());
  std::optional<FailureCode> inner;
  sandbox.bind("codemode.reenter", [&](std::string_view) -> std::string {
    try {
      sandbox.eval("1");
    } catch (const Error& e) {
      inner = e.code();
    }
    return "\"refused\"";
  });
  const auto start = std::chrono::steady_clock::now();
  Ended e = run_in(sandbox, call("codemode.reenter", "Codemode.reenter"));
  ASSERT_TRUE(e.ok()) << e.message;
  EXPECT_EQ(e.value(), "\"refused\"");
  ASSERT_TRUE(inner.has_value());
  EXPECT_EQ(*inner, FailureCode::invalid_request);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(run_in(sandbox, "2").ok());  // the Sandbox is still usable
}

TEST_P(SandboxThreads, TimeWaitingForTheSandboxDoesNotCountAgainstTheTimeout) {
  // Run A holds the Sandbox for 1.5 s inside a tool; run B, queued behind it,
  // then runs for 1 s. Its own 2 s timeout covers its 1 s, not the 2.5 s since
  // it was called.
  Options o = options(2);
  o.profile = Profile::permissive;  // B measures real time
  Sandbox sandbox(o);
  std::promise<void> a_started;
  sandbox.bind("codemode.hold", [&](std::string_view) -> std::string {
    a_started.set_value();
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the workload under test
    return "1";
  });
  std::thread a([&] { EXPECT_TRUE(run_in(sandbox, call("codemode.hold", "Codemode.hold")).ok()); });
  a_started.get_future().wait();
  const std::string spin_one_second =
      ruby() ? "t = Time.now; while Time.now - t < 1.0; end; 7"
             : "const t = Date.now(); while (Date.now() - t < 1000) {} 7";
  Ended b = run_in(sandbox, spin_one_second);
  a.join();
  ASSERT_TRUE(b.ok()) << b.message;
  EXPECT_EQ(b.value(), "7");
  EXPECT_LT(b.execution->usage().wall_time, 1.9);
}

TEST_P(SandboxThreads, ARunThatWaitsPastQueueTimeoutIsBusyAndNothingRan) {
  Options o = options();
  o.queue_timeout = std::chrono::milliseconds(100);
  Sandbox sandbox(o);
  std::promise<void> a_started;
  std::promise<void> release_a;
  std::shared_future<void> released = release_a.get_future().share();
  sandbox.bind("codemode.hold", [&](std::string_view) -> std::string {
    a_started.set_value();
    released.wait();
    return "1";
  });
  std::thread a([&] { EXPECT_TRUE(run_in(sandbox, call("codemode.hold", "Codemode.hold")).ok()); });
  a_started.get_future().wait();
  Ended b = run_in(sandbox, "2");
  release_a.set_value();
  a.join();
  ASSERT_EQ(b.code, FailureCode::busy) << b.message;
  EXPECT_EQ(b.execution, nullptr);  // nothing ran
  EXPECT_NE(b.message.find("queue_timeout"), std::string::npos) << b.message;
  EXPECT_TRUE(run_in(sandbox, "3").ok());
}

TEST_P(SandboxThreads, DestroyingTheSandboxCancelsTheRunInFlightAndJoinsIt) {
  auto sandbox = std::make_unique<Sandbox>(options(30));
  std::promise<void> started;
  sandbox->bind("codemode.started", [&](std::string_view) -> std::string {
    started.set_value();
    return "1";
  });
  Ended e;
  const std::string code =
      ruby() ? "Codemode.started({}); loop {}" : "codemode.started({}); while (true) {}";
  std::thread runner([&] { e = ended([&] { return sandbox->eval(code); }); });
  started.get_future().wait();
  const auto start = std::chrono::steady_clock::now();
  sandbox.reset();  // must cancel the spinning run, wait for it, then free the engine
  const auto took = std::chrono::steady_clock::now() - start;
  runner.join();
  EXPECT_EQ(e.code, FailureCode::cancelled) << e.message;
  EXPECT_LT(took, std::chrono::seconds(10));
}

INSTANTIATE_TEST_SUITE_P(Languages, SandboxThreads,
                         ::testing::Values(Language::javascript, Language::ruby),
                         [](const auto& info) {
                           return info.param == Language::ruby ? "Ruby" : "JavaScript";
                         });

}  // namespace
}  // namespace corral::sandbox
