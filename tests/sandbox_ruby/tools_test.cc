// Ruby guests: services at constant paths that dispatch to bound tools.
#include <atomic>
#include <thread>

#include "sandbox_ruby/test_util.hpp"

namespace corral::sandbox::testing {
namespace {

TEST(RubyTools, B08_PathsBecomeConstantsWithMethods) {
  RubySandbox sandbox(ruby_options());
  sandbox.bind("KV.get", [](std::string_view args) { return std::string("\"v\""); });
  sandbox.bind("Tools::Search.query", [](std::string_view args) { return std::string(args); });
  sandbox.bind("codemode.math.add", [](std::string_view) { return std::string("3"); });
  Execution e = sandbox.eval(
      "[KV.get('k'), Tools::Search.query(q: 'x', n: 2), Codemode::Math.add(a: 1), "
      "KV.class.to_s, Tools::Search.is_a?(Module)]");
  EXPECT_EQ(e.value(), R"(["v",{"q":"x","n":2},3,"Module",true])");
}

TEST(RubyTools, E16_BadPathsAreRefusedAtBind) {
  RubySandbox sandbox(ruby_options());
  EXPECT_THROW(sandbox.bind("search", [](std::string_view) { return std::string(); }),
               std::invalid_argument);
  EXPECT_THROW(sandbox.bind("KV.get-x", [](std::string_view) { return std::string(); }),
               std::invalid_argument);
  EXPECT_THROW(sandbox.bind("_kv.get", [](std::string_view) { return std::string(); }),
               std::invalid_argument);
  EXPECT_EQ(ruby_tool_path("tools.search.query"), "Tools::Search.query");
  EXPECT_EQ(ruby_tool_path("Tools::Search.query"), "Tools::Search.query");
}

TEST(RubyTools, B11_OverlappingPathsAndRubyConstantsAreRefused) {
  RubySandbox sandbox(ruby_options());
  auto tool = [](std::string_view) { return std::string("1"); };
  sandbox.bind("Tools::Search.query", tool);
  EXPECT_THROW(sandbox.bind("Tools::Search.query", tool), std::invalid_argument);
  EXPECT_THROW(sandbox.bind("tools.search.query", tool), std::invalid_argument);
  sandbox.bind("Tools::Search.other", tool);  // a sibling is fine
  sandbox.bind("Tools::Fetch.get", tool);
  // A method and a constant of the same name are different things in Ruby.
  sandbox.bind("Tools.search", tool);
  sandbox.bind("Tools::Search::Query.deeper", tool);
  for (const char* path :
       {"String.x", "Math.pi", "Kernel.system", "Corral.x", "File.read", "Object.x"}) {
    EXPECT_THROW(sandbox.bind(path, tool), std::invalid_argument) << path;
  }
  EXPECT_EQ(sandbox
                .eval("[Tools::Search.other, Tools::Fetch.get, Tools.search, "
                      "Tools::Search::Query.deeper]")
                .value(),
            "[1,1,1,1]");
}

TEST(RubyTools, B09_SharedPrefixIsOneModuleAndSandboxesAreIsolated) {
  RubySandbox a(ruby_options());
  a.bind("KV.get", [](std::string_view) { return std::string("1"); });
  a.bind("KV.put", [](std::string_view) { return std::string("2"); });
  RubySandbox b(ruby_options());
  b.bind("Other.x", [](std::string_view) { return std::string("3"); });
  EXPECT_EQ(a.eval("[KV.get, KV.put, Object.const_defined?(:Other)]").value(), "[1,2,false]");
  EXPECT_EQ(b.eval("[Other.x, Object.const_defined?(:KV)]").value(), "[3,false]");
}

TEST(RubyTools, B12_SyncToolIsCalledOnceAndReturnsItsValue) {
  RubySandbox sandbox(ruby_options());
  std::atomic<int> calls{0};
  sandbox.bind("KV.get", [&](std::string_view args) {
    ++calls;
    return std::string(R"({"got":)") + std::string(args) + "}";
  });
  Execution e = sandbox.eval("KV.get(['a', 1])['got']");
  EXPECT_EQ(e.value(), R"(["a",1])");
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(e.usage().tool_calls, 1u);
}

TEST(RubyTools, B12_AsyncToolAnswersLaterFromAnotherThread) {
  RubySandbox sandbox(ruby_options());
  std::vector<std::thread> threads;
  sandbox.bind_async("Slow.echo", [&](std::string args, ToolReply reply) {
    threads.emplace_back([args, reply] { reply.resolve(args); });
  });
  EXPECT_EQ(sandbox.eval("Slow.echo(1) + Slow.echo(2)").value(), "3");
  for (auto& t : threads) t.join();
}

TEST(RubyTools, B13_ArgumentsAndResultsCrossByValue) {
  RubySandbox sandbox(ruby_options());
  sandbox.bind("KV.echo", [](std::string_view args) { return std::string(args); });
  EXPECT_EQ(sandbox.eval("h = {'a' => [1]}; r = KV.echo(h); r['a'] << 2; [h, r]").value(),
            R"([{"a":[1]},{"a":[1,2]}])");
}

TEST(RubyTools, E11_ToolErrorsAreRescuableServiceErrors) {
  RubySandbox sandbox(ruby_options());
  sandbox.bind("KV.get", [](std::string_view) -> std::string { throw ToolError("no key"); });
  EXPECT_EQ(sandbox
                .eval("begin; KV.get('x'); rescue Corral::ServiceError => e; "
                      "[e.class.to_s, e.message]; end")
                .value(),
            R"(["Corral::ServiceError","KV.get: no key"])");
  auto caught = expect_failure(FailureCode::tool_error, [&] { sandbox.eval("KV.get('x')"); });
  EXPECT_TRUE(contains(caught.message, "no key")) << caught.message;
}

TEST(RubyTools, E11_InvalidJsonFromAToolIsToolError) {
  RubySandbox sandbox(ruby_options());
  sandbox.bind("KV.get", [](std::string_view) { return std::string("{nope"); });
  expect_failure(FailureCode::tool_error, [&] { sandbox.eval("KV.get"); });
}

TEST(RubyTools, E12_UnknownMethodOnAServiceIsNoSuchTool) {
  RubySandbox sandbox(ruby_options());
  sandbox.bind("Tools::Search.query", [](std::string_view) { return std::string("1"); });
  auto caught =
      expect_failure(FailureCode::no_such_tool, [&] { sandbox.eval("Tools::Search.serach(1)"); });
  EXPECT_TRUE(contains(caught.message, "Tools::Search.serach")) << caught.message;
  EXPECT_TRUE(contains(caught.message, "Tools::Search.query")) << caught.message;
  expect_failure(FailureCode::no_such_tool, [&] { sandbox.eval("Tools.other"); });
  EXPECT_EQ(sandbox.eval("begin; Tools.x; rescue Corral::NoServiceError; :rescued; end").value(),
            "\"rescued\"");
  // A constant nobody bound is Ruby's own NameError.
  auto name_error = expect_failure(FailureCode::guest_error, [&] { sandbox.eval("Nope.x"); });
  EXPECT_TRUE(contains(name_error.message, "NameError")) << name_error.message;
}

TEST(RubyTools, E55_UnserializableArgumentIsRefusedAtTheCallSite) {
  RubySandbox sandbox(ruby_options());
  std::atomic<int> calls{0};
  sandbox.bind("KV.put", [&](std::string_view) {
    ++calls;
    return std::string("null");
  });
  auto caught =
      expect_failure(FailureCode::tool_argument, [&] { sandbox.eval("KV.put(proc { 1 })"); });
  EXPECT_TRUE(contains(caught.message, "argument is a Proc")) << caught.message;
  expect_failure(FailureCode::tool_argument, [&] { sandbox.eval("KV.put(1, 2)"); });
  EXPECT_EQ(sandbox.eval("begin; KV.put(Object.new); rescue Corral::ServiceArgumentError; :ok; end")
                .value(),
            "\"ok\"");
  EXPECT_EQ(calls.load(), 0);
}

TEST(RubyTools, MaxToolCallsEndsTheRunWithToolError) {
  Options options = ruby_options();
  options.max_tool_calls = 3;
  RubySandbox sandbox(options);
  sandbox.bind("KV.get", [](std::string_view) { return std::string("1"); });
  auto caught = expect_failure(FailureCode::tool_error, [&] {
    sandbox.eval("loop { begin; KV.get; rescue Exception; end }");
  });
  EXPECT_TRUE(contains(caught.message, "max_tool_calls")) << caught.message;
  EXPECT_EQ(caught.execution->usage().tool_calls, 3u);
  EXPECT_EQ(sandbox.eval("KV.get + KV.get").value(), "2");
}

}  // namespace
}  // namespace corral::sandbox::testing
