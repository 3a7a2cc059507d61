// console formatting: each line as a person would see it in Node.
#include <gtest/gtest.h>

#include "sandbox_test_util.hpp"

namespace corral::sandbox {
namespace {

std::string logged(const std::string& args) {
  Sandbox sandbox(testing::quick());
  return sandbox.eval("console.log(" + args + ")").stdout_text();
}

TEST(Console, FormatsLikeNode) {
  EXPECT_EQ(logged("'plain', 1, true, null, undefined"), "plain 1 true null undefined\n");
  EXPECT_EQ(logged("{a: 1, 'b-c': 'x', d: [1, 2]}"), "{ a: 1, 'b-c': 'x', d: [ 1, 2 ] }\n");
  EXPECT_EQ(logged("[]"), "[]\n");
  EXPECT_EQ(logged("{}"), "{}\n");
  EXPECT_EQ(logged("{a: {b: {c: {d: 1}}}}"), "{ a: { b: { c: [Object] } } }\n");
  EXPECT_EQ(logged("(() => { const a = {}; a.self = a; return a; })()"), "{ self: [Circular] }\n");
  EXPECT_EQ(logged("new Map([[1, 'a']]), new Set([2])"), "Map(1) { 1 => 'a' } Set(1) { 2 }\n");
  EXPECT_EQ(logged("function named() {}, () => 1"), "[Function: named] [Function (anonymous)]\n");
  EXPECT_EQ(logged("10n, Symbol('s'), -0, NaN"), "10n Symbol(s) -0 NaN\n");
  EXPECT_EQ(logged("new Date(0)"), "1970-01-01T00:00:00.000Z\n");
  EXPECT_EQ(logged("new Uint8Array([1, 2])"), "Uint8Array(2) [ 1, 2 ]\n");
  EXPECT_EQ(logged("new (class Point { constructor() { this.x = 1; } })()"), "Point { x: 1 }\n");
  EXPECT_EQ(logged("'%s is %d years and %i%%', 'Ada', 36.6, 7.9"), "Ada is 36 years and 7%\n");
  EXPECT_EQ(logged("'%j', {a: 1}"), "{\"a\":1}\n");
  EXPECT_EQ(logged("'%o and %c.', [1], 'color: red'"), "[ 1 ] and .\n");
  EXPECT_EQ(logged("Promise.resolve(5)"), "Promise { 5 }\n");
}

TEST(Console, ErrorsPrintTheirStack) {
  Sandbox sandbox(testing::quick());
  const Execution e = sandbox.eval("console.error(new Error('oops'))");
  EXPECT_EQ(e.stdout_text(), "");
  EXPECT_EQ(e.stderr_text().rfind("Error: oops\n    at (eval):1", 0), 0u) << e.stderr_text();
}

TEST(Console, ChannelsSplitAsInNode) {
  Sandbox sandbox(testing::quick());
  const Execution e = sandbox.eval(
      "console.log('l'); console.info('i'); console.debug('d'); console.warn('w');"
      " console.error('e'); console.assert(1 === 2, 'math'); console.assert(true, 'fine')");
  EXPECT_EQ(e.stdout_text(), "l\ni\nd\n");
  EXPECT_EQ(e.stderr_text(), "w\ne\nAssertion failed: math\n");
}

TEST(Console, HostileGettersAreGuestErrors) {
  Sandbox sandbox(testing::quick());
  auto ended =
      testing::eval_in(sandbox, "console.log({ get boom() { throw new Error('getter'); } })");
  EXPECT_EQ(ended.code, FailureCode::guest_error);
  auto recursive = testing::eval_in(
      sandbox, "const o = { get again() { console.log(o); return 1; } }; console.log(o)");
  EXPECT_EQ(recursive.code, FailureCode::guest_error) << recursive.message;
}

TEST(Console, ThousandLinesAreKeptInOrder) {
  Sandbox sandbox(testing::quick());
  const Execution e = sandbox.eval("for (let i = 0; i < 1000; i++) console.log(i)");
  std::string expected;
  for (int i = 0; i < 1000; ++i) expected += std::to_string(i) + "\n";
  EXPECT_EQ(e.stdout_text(), expected);
}

}  // namespace
}  // namespace corral::sandbox
