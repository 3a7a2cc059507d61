// Ruby guests: snippets, run(entrypoint, args), execute shapes.
#include "sandbox_ruby/test_util.hpp"

namespace corral::sandbox::testing {
namespace {

TEST(RubyInvocation, B31_RunCallsASnippetEntrypointWithJsonArgs) {
  RubySandbox sandbox(ruby_options());
  sandbox.preload("Greeter",
                  "Greet = ->(name, opts) { \"hi #{name} #{opts['x']}\" }\n"
                  "def add(a, b) = a + b\n");
  EXPECT_EQ(sandbox.run("Greet", R"(["ann", {"x": 1}])").value(), R"("hi ann 1")");
  EXPECT_EQ(sandbox.run("add", "[2, 3]").value(), "5");
}

TEST(RubyInvocation, B31_ConstantWithoutCallIsGuestError) {
  RubySandbox sandbox(ruby_options());
  sandbox.preload("Lib", "Thing = 42");
  expect_failure(FailureCode::guest_error, [&] { sandbox.run("Thing"); });
}

TEST(RubyInvocation, E27_UnknownEntrypointNamesWhatExists) {
  RubySandbox sandbox(ruby_options());
  sandbox.preload("Lib", "Alpha = proc { 1 }\nBeta = proc { 2 }");
  auto caught = expect_failure(FailureCode::invalid_request, [&] { sandbox.run("Gamma"); });
  EXPECT_TRUE(contains(caught.message, "Alpha")) << caught.message;
  EXPECT_TRUE(contains(caught.message, "Beta")) << caught.message;
}

TEST(RubyInvocation, B32_SnippetsReplayInOrderInEveryRun) {
  RubySandbox sandbox(ruby_options());
  sandbox.preload("First", "$log = ['first']");
  sandbox.preload("Second", "$log << 'second'");
  EXPECT_EQ(sandbox.eval("$log << 'main'").value(), R"(["first","second","main"])");
  EXPECT_EQ(sandbox.eval("$log").value(), R"(["first","second"])");
}

TEST(RubyInvocation, B32_SnippetBacktracesNameTheSnippet) {
  RubySandbox sandbox(ruby_options());
  sandbox.preload("Lib", "def boom\n  raise 'from the snippet'\nend");
  auto caught = expect_failure(FailureCode::guest_error, [&] { sandbox.eval("boom"); });
  EXPECT_TRUE(contains(caught.message, "(snippet:Lib):2")) << caught.message;
  EXPECT_TRUE(contains(caught.message, "(eval):1")) << caught.message;
}

TEST(RubyInvocation, E32_SnippetCompileErrorRepeatsOnEveryRun) {
  RubySandbox sandbox(ruby_options());
  sandbox.preload("Broken", "def (");
  for (int i = 0; i < 2; ++i) {
    auto caught = expect_failure(FailureCode::compile_error, [&] { sandbox.eval("1"); });
    EXPECT_TRUE(contains(caught.message, "(snippet:Broken)")) << caught.message;
  }
}

TEST(RubyInvocation, E36_SnippetThatRaisesFailsTheRun) {
  RubySandbox sandbox(ruby_options());
  sandbox.preload("Bad", "raise 'at load'");
  auto caught = expect_failure(FailureCode::guest_error, [&] { sandbox.eval("1"); });
  EXPECT_TRUE(contains(caught.message, "(snippet:Bad)")) << caught.message;
}

TEST(RubyInvocation, B33_FirstRunSealsRegistration) {
  RubySandbox sandbox(ruby_options());
  sandbox.eval("1");
  EXPECT_THROW(sandbox.preload("Late", "1"), std::invalid_argument);
  EXPECT_THROW(sandbox.bind("KV.get", [](std::string_view) { return std::string(); }),
               std::invalid_argument);
}

TEST(RubyInvocation, ExecuteStripsFencesAndCallsALambda) {
  RubySandbox sandbox(ruby_options());
  EXPECT_EQ(sandbox.execute("```ruby\nx = 2\nx * 21\n```").value(), "42");
  EXPECT_EQ(sandbox.execute("-> { puts 'in'; [1, 2] }").value(), "[1,2]");
  EXPECT_EQ(sandbox.execute("proc { :sym }").value(), "\"sym\"");
}

}  // namespace
}  // namespace corral::sandbox::testing
