// TypeScript guests (Options::language = typescript): types erased before V8
// compiles, errors at the author's own lines and columns, refusals as
// compile_error. The stripper on its own: typescript_test.cc.
#include <gtest/gtest.h>

#include "sandbox_test_util.hpp"

namespace corral::sandbox {
namespace {

using testing::eval_in;
using testing::execute_in;
using testing::quick;

Options typescript(double timeout_seconds = 2.0) {
  Options options = quick(timeout_seconds);
  options.language = Language::typescript;
  return options;
}

TEST(TypeScriptGuest, ExecuteTakesEveryShapeWithTypes) {
  Sandbox sandbox(typescript());
  const std::pair<const char*, const char*> shapes[] = {
      {"async (): Promise<number> => { const x: number = 1; return x + 1; }", "2"},
      {"```ts\ninterface P { n: number }\nasync () => ({n: 3} as P).n\n```", "3"},
      {"type N = number;\nconst v: N = await Promise.resolve<N>(4);\nreturn v;", "4"},
      {"function sum<T extends number>(...xs: T[]): number { return xs.reduce((a, b) => a + b, "
       "0); }\nsum(2, 3)",
       "5"},
      {"class A { private readonly x: number = 6; get v(): number { return this.x; } }\nnew A().v",
       "6"},
      {"async () => 7", "7"},  // plain JavaScript is TypeScript too
  };
  for (const auto& [code, value] : shapes) {
    auto result = execute_in(sandbox, code);
    ASSERT_TRUE(result.ok()) << code << ": " << result.message;
    EXPECT_EQ(result.value(), value) << code;
  }
}

TEST(TypeScriptGuest, EvalStripsToo) {
  Sandbox sandbox(typescript());
  auto result = eval_in(sandbox, "let s: string = 'a' satisfies string; s + '!'");
  ASSERT_TRUE(result.ok()) << result.message;
  EXPECT_EQ(result.value(), R"("a!")");
}

TEST(TypeScriptGuest, StackTracesPointAtTheAuthorsColumns) {
  Sandbox sandbox(typescript());
  // The throw is at line 3, column 35 of what the author wrote; erasing the
  // annotations before it must not move it.
  auto result = execute_in(sandbox,
                           "async (): Promise<void> => {\n"
                           "  const n: Array<number> = [1];\n"
                           "  if (n.length as number) { throw new Error('here'); }\n"
                           "}");
  ASSERT_EQ(result.code, FailureCode::guest_error) << result.message;
  EXPECT_NE(result.message.find("(eval):3:35"), std::string::npos) << result.message;
}

TEST(TypeScriptGuest, NonErasableSyntaxIsACompileErrorNamingItsLine) {
  Sandbox sandbox(typescript());
  auto result = execute_in(sandbox, "async () => {\n  enum Color { Red }\n  return Color.Red;\n}");
  ASSERT_EQ(result.code, FailureCode::compile_error) << result.message;
  EXPECT_NE(result.message.find("TypeScript: enum"), std::string::npos) << result.message;
  EXPECT_NE(result.message.find("as const"), std::string::npos) << result.message;
  EXPECT_NE(result.message.find("(eval):2:3"), std::string::npos) << result.message;
  // The sandbox is fine afterwards.
  auto next = execute_in(sandbox, "async () => 1 as number");
  ASSERT_TRUE(next.ok()) << next.message;
  EXPECT_EQ(next.value(), "1");
}

TEST(TypeScriptGuest, WhatIsNotTypeScriptIsV8sSyntaxErrorAtItsLine) {
  Sandbox sandbox(typescript());
  auto result = execute_in(sandbox, "async () => {\n  const x: number = ;\n}");
  ASSERT_EQ(result.code, FailureCode::compile_error);
  EXPECT_NE(result.message.find("(eval):2"), std::string::npos) << result.message;
}

TEST(TypeScriptGuest, SnippetsAreTypeScriptToo) {
  Sandbox sandbox(typescript());
  sandbox.preload("lib", "function twice(x: number): number { return 2 * x; }");
  auto result = execute_in(sandbox, "async () => twice(21 as number)");
  ASSERT_TRUE(result.ok()) << result.message;
  EXPECT_EQ(result.value(), "42");
}

TEST(TypeScriptGuest, JavaScriptSandboxesDoNotStrip) {
  Sandbox sandbox(quick());
  auto result = execute_in(sandbox, "async () => { const x: number = 1; return x; }");
  EXPECT_EQ(result.code, FailureCode::compile_error);
}

}  // namespace
}  // namespace corral::sandbox
