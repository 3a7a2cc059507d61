// What fuzz/ruby_wire_fuzzer.cc found in the JSON form of Ruby values
// (src/sandbox/ruby/values.cc), through a real Ruby Sandbox: each case must
// end in its value or a typed failure with a short message, within bounds.
#include <string>

#include "sandbox_ruby/test_util.hpp"

namespace corral::sandbox::testing {
namespace {

// to_json spelled out the place of every element it wrote ("value[\"kkk..\"][7]"),
// copying the whole path per element: a 400 KB key above 200 000 elements
// copied 80 GB and ran into the timeout. The place is built for a refusal only.
TEST(RubyFuzzRegressions, ALongKeyAboveAWideArrayIsWrittenInLinearTime) {
  RubySandbox sandbox(ruby_options());
  const auto started = std::chrono::steady_clock::now();
  const std::string value = sandbox.eval("{'k' * 400_000 => Array.new(200_000, 0)}").value();
  const auto took = std::chrono::steady_clock::now() - started;
  // {"k..k":[0,..,0]}: braces 2, the key 400 002, ":" 1, the array 2 + 399 999.
  EXPECT_EQ(value.size(), 800'006u);
  EXPECT_EQ(value.substr(0, 5), "{\"kkk");
  // Fixed: about 0.1 s; before: 80 GB of copying, past the 10 s timeout.
  EXPECT_LT(took, std::chrono::seconds(3));
}

// A refusal quoted every key on the way in full: a value under two 100 KB
// keys made a 200 KB message (16 KB once the failure cut it) for the
// failure, the MCP answer and the log.
TEST(RubyFuzzRegressions, ARefusalNamesItsPlaceBriefly) {
  RubySandbox sandbox(ruby_options());
  const Caught under_long_keys = expect_failure(FailureCode::unserializable_value, [&] {
    sandbox.eval("{'k' * 100_000 => {'j' * 100_000 => [1, Object.new]}}");
  });
  EXPECT_LT(under_long_keys.message.size(), 1024u) << under_long_keys.message.substr(0, 2048);
  EXPECT_TRUE(contains(under_long_keys.message, R"(value["kkkkkkkk)")) << under_long_keys.message;
  EXPECT_TRUE(contains(under_long_keys.message, R"(..."][1] is a Object)"))
      << under_long_keys.message;

  const Caught deep = expect_failure(FailureCode::unserializable_value, [&] {
    sandbox.eval("a = [1]; 300.times { a = [{'key' * 10 => a}] }; a");
  });
  EXPECT_LT(deep.message.size(), 1024u) << deep.message.substr(0, 2048);
  EXPECT_TRUE(contains(deep.message, "nests deeper than 128 levels")) << deep.message;
  EXPECT_TRUE(contains(deep.message, "...")) << deep.message;

  const Caught long_class = expect_failure(FailureCode::unserializable_value, [&] {
    sandbox.eval(
        "name = 'A' + 'b' * 60_000; Object.const_set(name, Class.new); "
        "[Object.const_get(name).new]");
  });
  EXPECT_LT(long_class.message.size(), 1024u) << long_class.message.substr(0, 2048);
  EXPECT_TRUE(contains(long_class.message, "value[0] is a Abbbb")) << long_class.message;
  EXPECT_EQ(sandbox.eval("[1, 2].sum").value(), "3");
}

}  // namespace
}  // namespace corral::sandbox::testing
