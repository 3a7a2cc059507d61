// Ruby guests through the public Sandbox and sandbox::Pool API: options,
// the frozen Execution, threads and pools (kobako B-01, B-22, B-46..B-48,
// B-61, E-39).
#include <atomic>
#include <thread>
#include <vector>

#include "sandbox_ruby/test_util.hpp"

namespace corral::sandbox::testing {
namespace {

TEST(RubyApi, B01_LanguageIsAnOptionWithJavascriptAsTheDefault) {
  Options options;
  EXPECT_EQ(options.language, Language::javascript);
  EXPECT_EQ(parse_language("ruby"), Language::ruby);
  EXPECT_EQ(parse_language("javascript"), Language::javascript);
  EXPECT_EQ(to_string(Language::ruby), "ruby");
  EXPECT_EQ(to_string(Language::javascript), "javascript");
  // JavaScript first: the Ruby helper is started while V8's threads run
  // (the JavaScript sandbox builds its next context meanwhile).
  Sandbox javascript(options);
  EXPECT_EQ(javascript.eval("typeof globalThis").value(), "\"object\"");
  RubySandbox ruby(options);
  EXPECT_EQ(ruby.options().language, Language::ruby);
  EXPECT_EQ(ruby.eval("RUBY_ENGINE").value(), "\"mruby\"");
  EXPECT_EQ(javascript.eval("1 + 1").value(), "2");
}

TEST(RubyApi, B01_EveryCapAcceptsNone) {
  Options options;
  options.timeout.reset();
  options.memory_limit.reset();
  options.stdout_limit.reset();
  options.stderr_limit.reset();
  options.max_tool_calls.reset();
  RubySandbox sandbox(options);
  EXPECT_EQ(sandbox.eval("puts 'x' * 10; 'y' * 3").value(), "\"yyy\"");
}

TEST(RubyApi, E39_InvalidOptionsThrowNamingTheOption) {
  EXPECT_THROW(parse_language("python"), std::invalid_argument);
  try {
    parse_language("rb");
    ADD_FAILURE();
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), "language")) << e.what();
  }
  Options options;
  options.memory_limit = 0;
  EXPECT_THROW(RubySandbox{options}, std::invalid_argument);
  options = Options();
  options.language = static_cast<Language>(7);
  EXPECT_THROW(Sandbox{options}, std::invalid_argument);
}

TEST(RubyApi, B08_RubyPathsAreCheckedAtBindAndJavascriptGlobalsDoNotApply) {
  RubySandbox ruby(ruby_options());
  auto tool = [](std::string_view) { return std::string("1"); };
  ruby.bind("JSON.parse", tool);  // no JSON in mruby: a fine name for a service
  EXPECT_THROW(ruby.bind("Math.sqrt", tool), std::invalid_argument);
  EXPECT_THROW(ruby.bind("search", tool), std::invalid_argument);
  EXPECT_THROW(ruby.bind("JSON.parse", tool), std::invalid_argument);
  Sandbox javascript;
  EXPECT_THROW(javascript.bind("JSON.parse", tool), std::invalid_argument);
  EXPECT_EQ(ruby.eval("JSON.parse").value(), "1");
}

TEST(RubyApi, B61_FailedExecutionIsDistinguishableAndPreflightCarriesNone) {
  RubySandbox sandbox(ruby_options());
  Execution ok = sandbox.eval("nil");
  EXPECT_FALSE(ok.failed());
  EXPECT_EQ(ok.value(), "null");
  auto failed = expect_failure(FailureCode::guest_error, [&] { sandbox.eval("raise 'x'"); });
  EXPECT_TRUE(failed.execution->failed());
  EXPECT_THROW(sandbox.run("not an identifier"), std::invalid_argument);
  EXPECT_THROW(sandbox.run("Entry", "{}"), std::invalid_argument);
}

TEST(RubyApi, B22_OneSandboxSharedByThreadsSerialisesRuns) {
  // The helper is started by whichever thread's run comes first, while the
  // others wait and allocate.
  RubySandbox sandbox(ruby_options());
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) {
        const std::string n = std::to_string(t * 10 + i);
        if (sandbox.eval("$x = " + n + "; $x").value() == n) ++ok;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(ok.load(), 20);
}

TEST(RubyApi, B22_ManySandboxesRunInParallel) {
  Options options = ruby_options();
  options.timeout = std::chrono::milliseconds(400);
  std::vector<std::thread> threads;
  std::atomic<int> timeouts{0};
  const auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&] {
      RubySandbox sandbox(options);
      try {
        sandbox.eval("loop {}");
      } catch (const TimeoutError&) {
        ++timeouts;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(timeouts.load(), 3);
  // Three 0.4 s runs in parallel, not one after another.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1100));
}

TEST(RubyApi, B46_B47_PoolReusesRubySandboxesAndReplacesTrappedOnes) {
  Options options = ruby_options();
  options.timeout = std::chrono::milliseconds(200);
  std::atomic<int> built{0};
  Pool pool(2, std::chrono::seconds(5), [&] {
    ++built;
    auto sandbox = std::make_unique<RubySandbox>(options);
    sandbox->bind("KV.get", [](std::string_view) { return std::string("7"); });
    return std::unique_ptr<Sandbox>(std::move(sandbox));
  });
  EXPECT_EQ(built.load(), 0);
  EXPECT_EQ(pool.checkout()->eval("KV.get * 6").value(), "42");
  EXPECT_EQ(pool.checkout()->eval("KV.get").value(), "7");
  EXPECT_EQ(built.load(), 1);
  EXPECT_THROW(pool.checkout()->eval("loop {}"), TimeoutError);
  EXPECT_EQ(pool.discarded(), 1u);
  EXPECT_EQ(pool.checkout()->eval("1").value(), "1");
  EXPECT_EQ(built.load(), 2);
}

}  // namespace
}  // namespace corral::sandbox::testing
