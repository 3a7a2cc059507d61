// Ruby guests against the bounds of what crosses out of mruby: the JSON a
// value or a tool's argument becomes (held under the run's memory limit,
// whatever mruby's heap holds), and the frames between a Ruby Sandbox and
// its helper process (none is sent past the helper's frame limit; a run,
// an answer or output that would need one gets a typed answer instead).
#include <sys/resource.h>

#include <string>

#include "sandbox/hosted.hpp"
#include "sandbox/ruby/wire.hpp"
#include "sandbox_ruby/test_util.hpp"

namespace corral::sandbox::testing {
namespace {

// One 1 MB String held a thousand times: a few MB of mruby heap, a GB of
// JSON text.
constexpr const char* kRepeatedString = "s = 'x' * 1_000_000; Array.new(1000, s)";

Options sixteen_mib() {
  Options options = ruby_options();
  options.memory_limit = std::uint64_t{16} << 20;
  return options;
}

long peak_rss_kib() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

void expect_value_refused(Sandbox& sandbox) {
  auto caught = expect_failure(FailureCode::memory_limit, [&] { sandbox.eval(kRepeatedString); });
  EXPECT_TRUE(contains(caught.message,
                       "the run's value is too large as JSON: value[16] takes it "
                       "past 16777216 bytes (its memory limit)"))
      << caught.message;
  EXPECT_EQ(sandbox.eval("1 + 1").value(), "2");  // the next run is served
}

TEST(RubyJsonBound, AValueRepeatingOneStringFailsMemoryLimitInTheHelper) {
  RubySandbox sandbox(sixteen_mib());
  expect_value_refused(sandbox);
}

TEST(RubyJsonBound, AValueRepeatingOneStringFailsMemoryLimitInline) {
  const long before = peak_rss_kib();
  std::unique_ptr<Sandbox> sandbox = Hosted::make(with_ruby(sixteen_mib()), Hosting{false, {}});
  expect_value_refused(*sandbox);
  // Inline, the text would have been built in this process: it stopped at
  // the bound, not at a gigabyte.
  EXPECT_LT(peak_rss_kib() - before, 256 * 1024);
}

// Without a memory limit the bound is what a frame to the host holds.
TEST(RubyJsonBound, WithoutAMemoryLimitAValueIsHeldUnderAFrame) {
  Options options = ruby_options();
  options.memory_limit = std::nullopt;
  options.timeout = std::chrono::seconds(120);  // 256 MiB of text: over 10 s under ASan
  RubySandbox sandbox(options);
  auto caught = expect_failure(FailureCode::memory_limit,
                               [&] { sandbox.eval("s = 'x' * 1_000_000; Array.new(300, s)"); });
  EXPECT_TRUE(
      contains(caught.message, "the run's value is too large as JSON: value[") &&
      contains(caught.message, "] takes it past " + std::to_string(ruby::kFrameRoom) + " bytes"))
      << caught.message;
  EXPECT_FALSE(contains(caught.message, "(its memory limit)")) << caught.message;
  EXPECT_EQ(sandbox.eval("1 + 1").value(), "2");
}

TEST(RubyJsonBound, ATooLargeArgumentIsAToolErrorTheGuestCanRescue) {
  RubySandbox sandbox(sixteen_mib());
  int calls = 0;
  sandbox.bind("Tools.echo", [&](std::string_view args) {
    ++calls;
    return std::string(args);
  });
  const Execution e = sandbox.eval(
      "s = 'x' * 1_000_000\n"
      "begin\n  Tools.echo(Array.new(1000, s))\nrescue => e\n  e.message\nend");
  EXPECT_TRUE(contains(e.value(),
                       "the argument of Tools.echo is too large as JSON: "
                       "argument[16] takes it past 16777216 bytes"))
      << e.value();
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(sandbox.eval("Tools.echo(7)").value(), "7");
}

// Past the helper's frame limit: without an output limit, output goes out
// in pieces and arrives whole.
TEST(RubyFrames, OutputLargerThanAFrameArrivesWhole) {
  Options options = ruby_options();
  options.stdout_limit = std::nullopt;
  options.memory_limit = std::nullopt;
  RubySandbox sandbox(options);
  const std::size_t size = ruby::kMaxFrame + (1 << 20);
  const Execution e = sandbox.eval("print 'y' * " + std::to_string(size) + "; 1");
  EXPECT_EQ(e.stdout_text().size(), size);
  EXPECT_FALSE(e.stdout_truncated());
  EXPECT_EQ(sandbox.eval("2").value(), "2");
}

TEST(RubyFrames, AToolAnswerLargerThanAFrameIsAToolError) {
  Options options = ruby_options();
  options.memory_limit = std::nullopt;
  RubySandbox sandbox(options);
  sandbox.bind("Tools.big",
               [](std::string_view) { return "\"" + std::string(ruby::kMaxFrame, 'z') + "\""; });
  const Execution e = sandbox.eval("begin\n  Tools.big.size\nrescue => e\n  e.message\nend");
  EXPECT_TRUE(contains(e.value(), "the tool's answer is ")) << e.value().substr(0, 300);
  EXPECT_TRUE(contains(e.value(), "more than the Ruby helper's frame limit of 268435456 bytes"))
      << e.value().substr(0, 300);
  EXPECT_EQ(sandbox.eval("3").value(), "3");
}

TEST(RubyFrames, ARunLargerThanAFrameIsAnInvalidRequest) {
  RubySandbox sandbox(ruby_options());
  const std::string code = "1 #" + std::string(ruby::kMaxFrame, '#');
  auto caught = expect_failure(FailureCode::invalid_request, [&] { sandbox.eval(code); });
  EXPECT_TRUE(contains(caught.message, "the run (its code and arguments) is ")) << caught.message;
  EXPECT_EQ(sandbox.eval("4").value(), "4");  // the same helper goes on
}

}  // namespace
}  // namespace corral::sandbox::testing
