// Hostile code against the run's bounds: every scenario must end with the
// right failure code, and the process (and the sandbox) must stay usable.
#include <gtest/gtest.h>

#include <thread>

#include "sandbox/hosted.hpp"
#include "sandbox/v8/heap_ceiling.hpp"
#include "sandbox_test_util.hpp"

namespace corral::sandbox {
namespace {

using testing::eval_in;
using testing::execute_in;
using testing::quick;

void expect_code(const testing::Ended& ended, FailureCode code) {
  ASSERT_TRUE(ended.code.has_value()) << "run succeeded with " << ended.value();
  EXPECT_EQ(*ended.code, code) << ended.message;
  ASSERT_NE(ended.execution, nullptr);
  EXPECT_TRUE(ended.execution->failed());
  EXPECT_EQ(ended.execution->value(), "null");
}

void expect_still_usable(Sandbox& sandbox) {
  auto after = eval_in(sandbox, "1 + 1");
  ASSERT_TRUE(after.ok()) << after.message;
  EXPECT_EQ(after.value(), "2");
}

// ---- timeout (E-19) -------------------------------------------------------

TEST(SandboxTimeout, E19_StopsSyncInfiniteLoop) {
  Sandbox sandbox(quick(0.2));
  auto ended = eval_in(sandbox, "while (true) {}");
  expect_code(ended, FailureCode::timeout);
  EXPECT_GE(ended.execution->usage().wall_time, 0.2);
  EXPECT_LT(ended.execution->usage().wall_time, 5.0);
  EXPECT_TRUE(sandbox.last_run_trapped());
  expect_still_usable(sandbox);
  EXPECT_FALSE(sandbox.last_run_trapped());
}

TEST(SandboxTimeout, StopsLoopInFinallyAfterCatchingEverything) {
  Sandbox sandbox(quick(0.2));
  expect_code(eval_in(sandbox, "try { while (true) {} } catch (e) {} finally { while (true) {} }"),
              FailureCode::timeout);
  expect_still_usable(sandbox);
}

TEST(SandboxTimeout, StopsMicrotaskLoop) {
  Sandbox sandbox(quick(0.2));
  expect_code(eval_in(sandbox,
                      "function spin() { Promise.resolve().then(spin); } spin(); "
                      "new Promise(() => {})"),
              FailureCode::timeout);
  expect_still_usable(sandbox);
}

TEST(SandboxTimeout, StopsLoopAfterAwait) {
  Sandbox sandbox(quick(0.2));
  expect_code(execute_in(sandbox, "async () => { await null; while (true) {} }"),
              FailureCode::timeout);
  expect_still_usable(sandbox);
}

TEST(SandboxTimeout, StopsRunAwaitingToolThatNeverAnswers) {
  Sandbox sandbox(quick(0.2));
  sandbox.bind_async("codemode.never", [](std::string, ToolReply) {});
  auto ended =
      execute_in(sandbox, "async () => { console.log('before'); await codemode.never(); }");
  expect_code(ended, FailureCode::timeout);
  EXPECT_EQ(ended.execution->stdout_text(), "before\n");
  EXPECT_EQ(ended.execution->usage().tool_calls, 1u);
}

TEST(SandboxTimeout, TimeSpentInSyncToolsCounts) {
  Sandbox sandbox(quick(0.2));
  sandbox.bind("codemode.slow", [](std::string_view) {
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    return std::string("1");
  });
  expect_code(eval_in(sandbox, "for (;;) codemode.slow()"), FailureCode::timeout);
}

TEST(SandboxTimeout, CatchingTheTerminationIsImpossible) {
  Sandbox sandbox(quick(0.2));
  expect_code(eval_in(sandbox, "for (;;) { try { while (true) {} } catch (e) { continue; } }"),
              FailureCode::timeout);
}

TEST(SandboxTimeout, NoneMeansNoDeadline) {
  Options options;
  options.timeout.reset();
  Sandbox sandbox(options);
  auto ended = eval_in(sandbox, "let n = 0; for (let i = 0; i < 1e6; i++) n += i; n");
  ASSERT_TRUE(ended.ok()) << ended.message;
}

TEST(SandboxCancel, CancelFromAnotherThreadEndsTheRunAsCancelled) {
  Sandbox sandbox(quick(30));
  sandbox.bind("codemode.ready", [&](std::string_view) {
    std::thread([&] { sandbox.cancel(); }).detach();
    return std::string("null");
  });
  auto ended = eval_in(sandbox, "codemode.ready(); while (true) {}");
  expect_code(ended, FailureCode::cancelled);
  expect_still_usable(sandbox);
}

// A cancel that comes before the run could take it (a worker's runner is
// still on its way to the sandbox) stops the next run as it starts, instead
// of being lost; clear_pending_cancel() forgets it (sandbox/hosted.hpp).
TEST(SandboxCancel, CancelIncludingNextStopsARunThatHadNotStartedYet) {
  Sandbox sandbox(quick(30));
  sandbox.cancel();  // the plain form is lost between runs
  EXPECT_EQ(sandbox.eval("1 + 1").value(), "2");
  Hosted::cancel_including_next(sandbox);
  auto ended = eval_in(sandbox, "while (true) {}");
  expect_code(ended, FailureCode::cancelled);
  EXPECT_EQ(sandbox.eval("2 + 2").value(), "4");  // taken once
  Hosted::cancel_including_next(sandbox);
  Hosted::clear_pending_cancel(sandbox);
  EXPECT_EQ(sandbox.eval("3 + 3").value(), "6");
}

// ---- memory (E-20) ----------------------------------------------------------

Options small_memory() {
  Options options = quick(20);
  options.memory_limit = std::uint64_t{16} << 20;
  return options;
}

void expect_memory_limit(const char* code) {
  SCOPED_TRACE(code);
  Sandbox sandbox(small_memory());
  auto ended = eval_in(sandbox, code);
  expect_code(ended, FailureCode::memory_limit);
  // What was measured, up to the heap's backstop past the limit (a string
  // doubled in one step reaches about twice the limit before V8's next GC).
  EXPECT_LE(ended.execution->usage().memory_peak,
            v8engine::highest_memory_peak(std::uint64_t{16} << 20));
  expect_still_usable(sandbox);
  // The limit is restored for the next run, not left raised.
  expect_code(eval_in(sandbox, code), FailureCode::memory_limit);
}

TEST(SandboxMemory, E20_ArrayOfObjectsBomb) {
  expect_memory_limit("const a = []; for (;;) a.push({n: a.length, s: 'x' + a.length});");
}
TEST(SandboxMemory, E20_MapBomb) {
  expect_memory_limit("const m = new Map(); for (let i = 0;; i++) m.set(i, [i]);");
}
TEST(SandboxMemory, E20_StringBomb) {
  expect_memory_limit("const parts = []; for (let i = 0;; i++) parts.push('y'.repeat(1024) + i);");
}
TEST(SandboxMemory, E20_HugeStringConcatenation) {
  expect_memory_limit(
      "let s = 'x'; const keep = []; for (;;) { s = s + s; keep.push(s.slice(1)); }");
}
TEST(SandboxMemory, E20_TypedArrayBomb) {
  expect_memory_limit("const a = []; for (;;) a.push(new Float64Array(1 << 16));");
}
TEST(SandboxMemory, E20_OneHugeArrayBuffer) { expect_memory_limit("new ArrayBuffer(1 << 30)"); }
TEST(SandboxMemory, E20_CaughtArrayBufferFailureStillEndsTheRun) {
  expect_memory_limit("for (;;) { try { new ArrayBuffer(1 << 30); } catch (e) {} }");
}
TEST(SandboxMemory, E20_HugeArrayInOneAllocation) {
  expect_memory_limit("new Array(4e6).fill(1.5)");
}
TEST(SandboxMemory, E20_ObjectWithManyProperties) {
  expect_memory_limit("const o = {}; for (let i = 0;; i++) o['k' + i] = i;");
}

TEST(SandboxMemory, E20_WebAssemblyIsNotOffered) {
  Sandbox sandbox(small_memory());
  auto ended = eval_in(sandbox, "new WebAssembly.Memory({initial: 1000})");
  expect_code(ended, FailureCode::guest_error);
  EXPECT_NE(ended.message.find("WebAssembly is not defined"), std::string::npos) << ended.message;
}

TEST(SandboxMemory, SmallRunsStayUnderTheLimitAndReportPeak) {
  Sandbox sandbox(small_memory());
  auto ended = eval_in(sandbox, "const a = new Uint8Array(1 << 20); a.length");
  ASSERT_TRUE(ended.ok()) << ended.message;
  EXPECT_EQ(ended.value(), "1048576");
  EXPECT_GE(ended.execution->usage().memory_peak, std::uint64_t{1} << 20);
}

TEST(SandboxMemory, LimitIsPerRunNotCumulative) {
  Sandbox sandbox(small_memory());
  for (int i = 0; i < 8; ++i) {
    auto ended =
        eval_in(sandbox, "const a = []; for (let i = 0; i < 1e5; i++) a.push({i}); a.length");
    ASSERT_TRUE(ended.ok()) << "run " << i << ": " << ended.message;
  }
}

// ---- stack -----------------------------------------------------------------

TEST(SandboxStack, DeepRecursionIsAGuestError) {
  Sandbox sandbox(quick());
  auto ended = eval_in(sandbox, "function f(n) { return f(n + 1) + 1; } f(0)");
  expect_code(ended, FailureCode::guest_error);
  EXPECT_NE(ended.message.find("Maximum call stack size exceeded"), std::string::npos);
  expect_still_usable(sandbox);
}

TEST(SandboxStack, DeepRecursionOnASmallThreadStack) {
  // An embedder's thread with a 512 KiB stack must not crash either.
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 512 * 1024);
  struct Job {
    testing::Ended ended;
  } job;
  pthread_t thread;
  ASSERT_EQ(pthread_create(
                &thread, &attr,
                [](void* arg) -> void* {
                  Sandbox sandbox(quick());
                  static_cast<Job*>(arg)->ended =
                      eval_in(sandbox, "function f(n) { return f(n + 1) + 1; } f(0)");
                  return nullptr;
                },
                &job),
            0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  expect_code(job.ended, FailureCode::guest_error);
}

TEST(SandboxStack, DeepNestingInResultIsUnserializable) {
  Sandbox sandbox(quick());
  expect_code(eval_in(sandbox, "let o = {}; for (let i = 0; i < 1000; i++) o = {o}; o"),
              FailureCode::unserializable_value);
}

}  // namespace
}  // namespace corral::sandbox
