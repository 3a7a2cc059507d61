// Snippets, entry points and code-mode shapes: kobako B-31, B-32, E-27,
// E-32, E-33, E-34, E-36 translated; execute() shapes.
#include <gtest/gtest.h>

#include "sandbox_test_util.hpp"

namespace corral::sandbox {
namespace {

using testing::ended;
using testing::eval_in;
using testing::execute_in;
using testing::quick;

TEST(Invocation, B31_RunCallsASnippetEntrypointWithJsonArgs) {
  Sandbox sandbox(quick());
  sandbox.preload("Math2",
                  "function add(a, b) { return a + b; }\n"
                  "const greet = async (who) => `hello ${who.name}`;");
  EXPECT_EQ(sandbox.run("add", "[2, 40]").value(), "42");
  EXPECT_EQ(sandbox.run("greet", R"([{"name": "ada"}])").value(), R"("hello ada")");
}

TEST(Invocation, B32_SnippetsReplayInOrderInEveryRun) {
  Sandbox sandbox(quick());
  sandbox.preload("First", "globalThis.order = ['first']; let counter = 0;");
  sandbox.preload("Second", "order.push('second'); function bump() { return ++counter; }");
  EXPECT_EQ(sandbox.eval("order").value(), R"(["first","second"])");
  EXPECT_EQ(sandbox.run("bump").value(), "1");
  EXPECT_EQ(sandbox.run("bump").value(), "1");  // fresh state every run (B-03)
}

TEST(Invocation, B32_SnippetStackTracesNameTheSnippet) {
  Sandbox sandbox(quick());
  sandbox.preload("Helpers", "function explode() {\n  throw new Error('kaboom');\n}");
  auto failed = ended([&] { return sandbox.run("explode"); });
  ASSERT_EQ(failed.code, FailureCode::guest_error);
  EXPECT_NE(failed.message.find("(snippet:Helpers):2"), std::string::npos) << failed.message;
}

TEST(Invocation, E27_UnknownEntrypointNamesWhatExists) {
  Sandbox sandbox(quick());
  sandbox.preload("Lib", "function alpha() {} function beta() {} const notFn = 1;");
  auto failed = ended([&] { return sandbox.run("gamma"); });
  ASSERT_EQ(failed.code, FailureCode::invalid_request);
  EXPECT_NE(failed.message.find("alpha"), std::string::npos) << failed.message;
  EXPECT_NE(failed.message.find("beta"), std::string::npos) << failed.message;
  EXPECT_EQ(ended([&] { return sandbox.run("notFn"); }).code, FailureCode::invalid_request);
}

TEST(Invocation, E32_SnippetCompileErrorRepeatsOnEveryRun) {
  Sandbox sandbox(quick());
  sandbox.preload("Broken", "function (");
  for (int i = 0; i < 2; ++i) {
    auto failed = eval_in(sandbox, "1");
    ASSERT_EQ(failed.code, FailureCode::compile_error);
    EXPECT_NE(failed.message.find("snippet Broken"), std::string::npos) << failed.message;
  }
}

TEST(Invocation, E36_SnippetThatThrowsFailsTheRun) {
  Sandbox sandbox(quick());
  sandbox.preload("Thrower", "throw new Error('at load');");
  auto failed = eval_in(sandbox, "1");
  ASSERT_EQ(failed.code, FailureCode::guest_error);
  EXPECT_NE(failed.message.find("(snippet:Thrower)"), std::string::npos) << failed.message;
}

TEST(Invocation, E33_E34_SnippetNamesAreUniqueIdentifiers) {
  Sandbox sandbox(quick());
  sandbox.preload("One", "1");
  EXPECT_THROW(sandbox.preload("One", "2"), std::invalid_argument);
  EXPECT_THROW(sandbox.preload("not valid", "2"), std::invalid_argument);
  EXPECT_THROW(sandbox.preload("A::B", "2"), std::invalid_argument);
}

TEST(Invocation, ExecuteAcceptsTheShapesLlmsWrite) {
  Sandbox sandbox(quick());
  const std::pair<const char*, const char*> shapes[] = {
      {"async () => { return 1 + 1; }", "2"},
      {"async () => 3", "3"},
      {"() => 4;", "4"},
      {"async function main() { return 5; }", "5"},
      {"function () { return 6; }", "6"},
      {"const x = 6; x + 1", "7"},
      {"const v = await Promise.resolve(8);\nreturn v;", "8"},
      {"```js\nasync () => 9\n```", "9"},
      {"```\n10\n```", "10"},
      {"// a comment\nasync () => {\n  // inside\n  return 11;\n}\n", "11"},
      {"({a: 12})", R"({"a":12})"},
  };
  for (const auto& [code, value] : shapes) {
    auto result = execute_in(sandbox, code);
    ASSERT_TRUE(result.ok()) << code << ": " << result.message;
    EXPECT_EQ(result.value(), value) << code;
  }
}

TEST(Invocation, ExecuteReportsSyntaxErrorsAtTheRightLine) {
  Sandbox sandbox(quick());
  auto failed = execute_in(sandbox, "async () => {\n  const x = ;\n}");
  ASSERT_EQ(failed.code, FailureCode::compile_error);
  EXPECT_NE(failed.message.find("(eval):2"), std::string::npos) << failed.message;
}

TEST(Invocation, EvalAwaitsAPromiseCompletionValue) {
  Sandbox sandbox(quick());
  EXPECT_EQ(sandbox.eval("(async () => { await null; return 'later'; })()").value(), R"("later")");
}

}  // namespace
}  // namespace corral::sandbox
