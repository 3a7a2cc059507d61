// Profiles (kobako B-45, B-54) and capability confinement: the guest has
// only what is bound.
#include <gtest/gtest.h>

#include "sandbox_test_util.hpp"

namespace corral::sandbox {
namespace {

using testing::eval_in;
using testing::quick;

TEST(Profile, B45_HermeticFreezesTheClockAndRandomness) {
  Sandbox a(quick());
  Sandbox b(quick());
  const char* code = "[Date.now(), new Date().toISOString(), Math.random(), Math.random()]";
  const std::string first = a.eval(code).value();
  EXPECT_EQ(first, a.eval(code).value());
  EXPECT_EQ(first, b.eval(code).value());
  EXPECT_EQ(first.substr(0, 30), R"([0,"1970-01-01T00:00:00.000Z",)");
}

TEST(Profile, PermissiveHasRealClockAndRandomness) {
  Options options = quick();
  options.profile = Profile::permissive;
  Sandbox sandbox(options);
  EXPECT_EQ(sandbox.eval("Date.now() > 1.7e12").value(), "true");
  EXPECT_NE(sandbox.eval("Math.random()").value(), sandbox.eval("Math.random()").value());
  EXPECT_EQ(sandbox.eval("eval('1 + 1')").value(), "2");
}

TEST(Profile, B54_HermeticRefusesCodeFromStrings) {
  Sandbox sandbox(quick());
  for (const char* code : {"eval('1')", "new Function('return 1')()", "Function('return 1')()",
                           "(async function(){}).constructor('return 1')"}) {
    auto ended = eval_in(sandbox, code);
    EXPECT_EQ(ended.code, FailureCode::guest_error) << code;
    EXPECT_NE(ended.message.find("EvalError"), std::string::npos) << ended.message;
  }
}

TEST(Profile, B54_NothingUnboundIsReachable) {
  for (Profile profile : {Profile::hermetic, Profile::permissive}) {
    Options options = quick();
    options.profile = profile;
    Sandbox sandbox(options);
    const Execution e = sandbox.eval(
        "['require', 'process', 'fetch', 'XMLHttpRequest', 'setTimeout', 'setInterval',"
        " 'WebAssembly', 'SharedArrayBuffer', 'Deno', 'Bun', 'module', 'importScripts',"
        " 'Worker', 'global', 'Buffer'].filter(n => typeof globalThis[n] !== 'undefined')");
    EXPECT_EQ(e.value(), "[]") << to_string(profile);
  }
}

TEST(Profile, DynamicImportIsRefused) {
  Sandbox sandbox(quick());
  auto ended = eval_in(sandbox, "import('fs')");
  EXPECT_EQ(ended.code, FailureCode::guest_error) << ended.message;
}

TEST(Profile, AtomicsWaitIsRefused) {
  Sandbox sandbox(quick());
  auto ended = eval_in(sandbox, "Atomics.wait(new Int32Array(new ArrayBuffer(8)), 0, 0, 1000)");
  EXPECT_EQ(ended.code, FailureCode::guest_error) << ended.message;
}

}  // namespace
}  // namespace corral::sandbox
