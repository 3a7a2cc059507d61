// Ruby guests: lifecycle, values, output, errors (kobako anchors).
#include <gtest/gtest.h>

#include <string>

#include "sandbox_ruby/ruby_sandbox.hpp"

namespace corral::sandbox {
namespace {

using testing::RubySandbox;

Options ruby_options() {
  Options options;
  options.timeout = std::chrono::seconds(10);
  return options;
}

template <typename Fn>
Error expect_failure(FailureCode code, Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e;
  }
  ADD_FAILURE() << "expected failure " << to_string(code);
  return Error(FailureCode::internal, "no failure");
}

TEST(RubyLifecycle, B02_EvalReturnsFrozenExecutionWithLastExpression) {
  RubySandbox sandbox(ruby_options());
  Execution e = sandbox.eval("x = 6\nx * 7");
  EXPECT_EQ(e.value(), "42");
  EXPECT_FALSE(e.failed());
}

TEST(RubyLifecycle, B03_EachRunGetsAFreshState) {
  RubySandbox sandbox(ruby_options());
  sandbox.eval("$leak = 1; class String; def shout; upcase; end; end; LEAK = 2");
  EXPECT_EQ(sandbox
                .eval("[$leak.nil?, \"a\".respond_to?(:shout), "
                      "Object.const_defined?(:LEAK)]")
                .value(),
            "[true,false,false]");
}

TEST(RubyLifecycle, B06_ValuesCrossAsJson) {
  RubySandbox sandbox(ruby_options());
  EXPECT_EQ(sandbox.eval("nil").value(), "null");
  EXPECT_EQ(sandbox.eval("").value(), "null");
  EXPECT_EQ(sandbox.eval("{a: [1, 2.5, 'x', :y, true, nil], 'b' => {}}").value(),
            R"({"a":[1,2.5,"x","y",true,null],"b":{}})");
  EXPECT_EQ(sandbox.eval("\"quote\\\" \\n\"").value(), R"("quote\" \n")");
}

TEST(RubyLifecycle, E06_ValuesWithoutJsonFormAreUnserializable) {
  RubySandbox sandbox(ruby_options());
  auto e = expect_failure(FailureCode::unserializable_value,
                          [&] { sandbox.eval("[1, {fn: proc { 1 }}]"); });
  EXPECT_NE(std::string(e.what()).find("value[1][\"fn\"] is a Proc"), std::string::npos)
      << e.what();
  expect_failure(FailureCode::unserializable_value, [&] { sandbox.eval("1.0 / 0"); });
  expect_failure(FailureCode::unserializable_value, [&] { sandbox.eval("a = []; a << a; a"); });
  expect_failure(FailureCode::unserializable_value, [&] { sandbox.eval("Object.new"); });
  expect_failure(FailureCode::unserializable_value, [&] { sandbox.eval("{1 => 2}"); });
}

TEST(RubyLifecycle, B04_OutputIsCapturedFromPutsPrintPAndStderr) {
  RubySandbox sandbox(ruby_options());
  Execution e = sandbox.eval(
      "puts 'a', [1, [2]]; print 'b', 'c'; p :d; $stderr.puts 'e'; warn 'f'; "
      "$stdout.write('g'); STDERR.print 'h'; puts; puts nil; 1");
  EXPECT_EQ(e.stdout_text(), "a\n1\n2\nbc:d\ng\n\n");
  EXPECT_EQ(e.stderr_text(), "e\nf\nh");
}

TEST(RubyLifecycle, E04_UncaughtExceptionIsGuestErrorWithClassMessageAndEvalFrame) {
  RubySandbox sandbox(ruby_options());
  auto e = expect_failure(FailureCode::guest_error, [&] {
    sandbox.eval("def f(x)\n  raise ArgumentError, \"bad #{x}\"\nend\nf(1)");
  });
  const std::string what = e.what();
  EXPECT_NE(what.find("bad 1 (ArgumentError)"), std::string::npos) << what;
  EXPECT_NE(what.find("(eval):2"), std::string::npos) << what;
}

TEST(RubyLifecycle, E05_SyntaxErrorIsCompileErrorWithLocation) {
  RubySandbox sandbox(ruby_options());
  auto e = expect_failure(FailureCode::compile_error, [&] { sandbox.eval("x = 1\ndef (\n"); });
  EXPECT_NE(std::string(e.what()).find("(eval):"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace corral::sandbox
