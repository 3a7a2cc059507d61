// Tools ("services"): kobako B-08, B-09, B-11, B-12, B-13, B-22, B-33,
// E-11, E-12, E-15, E-45, E-55 translated to JavaScript tools.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

#include "core/json.hpp"
#include "sandbox_test_util.hpp"

namespace corral::sandbox {
namespace {

using testing::eval_in;
using testing::execute_in;
using testing::quick;

std::string echo(std::string_view args) { return std::string(args); }

TEST(Tools, B12_SyncToolReturnsItsValueDirectly) {
  Sandbox sandbox(quick());
  sandbox.bind("codemode.add", [](std::string_view args) {
    auto v = core::parse_json(args, "args").as_object();
    return std::to_string(v.at("a").as_int64() + v.at("b").as_int64());
  });
  const Execution e = sandbox.eval("codemode.add({a: 2, b: 40})");
  EXPECT_EQ(e.value(), "42");
  EXPECT_EQ(e.usage().tool_calls, 1u);
}

TEST(Tools, B13_ArgumentsAndResultsCrossAsJson) {
  Sandbox sandbox(quick());
  std::string seen;
  sandbox.bind("codemode.echo", [&](std::string_view args) {
    seen = args;
    return std::string(R"({"nested":{"list":[1,2.5,"s",null,true]}})");
  });
  const Execution e = sandbox.eval(
      "const r = codemode.echo({when: new Date(0), list: [1, undefined], s: 'x'});"
      "[r.nested.list.length, typeof r.nested]");
  EXPECT_EQ(seen, R"({"when":"1970-01-01T00:00:00.000Z","list":[1,null],"s":"x"})");
  EXPECT_EQ(e.value(), R"([5,"object"])");
  EXPECT_EQ(sandbox.eval("0").value(), "0");
}

TEST(Tools, AsyncToolReturnsAPromiseAnsweredFromAnotherThread) {
  Sandbox sandbox(quick(5));
  sandbox.bind_async("codemode.later", [](std::string args, ToolReply reply) {
    std::thread([args, reply] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      reply.resolve(args);
    }).detach();
  });
  const Execution e = sandbox.execute(
      "async () => { const p = codemode.later({n: 1}); const isPromise = p instanceof Promise;"
      " const [a, b] = await Promise.all([p, codemode.later({n: 2})]); return [isPromise, a.n, "
      "b.n]; }");
  EXPECT_EQ(e.value(), "[true,1,2]");
  EXPECT_EQ(e.usage().tool_calls, 2u);
}

TEST(Tools, E11_ToolExceptionsAreCatchableByTheGuest) {
  Sandbox sandbox(quick());
  sandbox.bind("codemode.fail",
               [](std::string_view) -> std::string { throw ToolError("no such user"); });
  sandbox.bind_async("codemode.fail_async",
                     [](std::string, ToolReply reply) { reply.reject("backend down"); });
  const Execution e = sandbox.execute(
      "async () => { const out = [];"
      " try { codemode.fail(); } catch (e) { out.push(e.message); }"
      " try { await codemode.fail_async(); } catch (e) { out.push(e.message); }"
      " return out; }");
  EXPECT_EQ(e.value(), R"(["codemode.fail: no such user","backend down"])");
}

TEST(Tools, E11_UncaughtToolFailureIsToolError) {
  Sandbox sandbox(quick());
  sandbox.bind("codemode.fail",
               [](std::string_view) -> std::string { throw std::runtime_error("disk on fire"); });
  auto ended = eval_in(sandbox, "codemode.fail({})");
  ASSERT_EQ(ended.code, FailureCode::tool_error);
  EXPECT_NE(ended.message.find("disk on fire"), std::string::npos) << ended.message;
  auto rejected = execute_in(sandbox, "async () => { await Promise.resolve(); codemode.fail(); }");
  EXPECT_EQ(rejected.code, FailureCode::tool_error) << rejected.message;
}

TEST(Tools, ToolReturningInvalidJsonIsAToolError) {
  Sandbox sandbox(quick());
  sandbox.bind("codemode.broken", [](std::string_view) { return std::string("{not json"); });
  EXPECT_EQ(eval_in(sandbox, "codemode.broken()").code, FailureCode::tool_error);
}

TEST(Tools, E12_UnknownToolIsNoSuchTool) {
  Sandbox sandbox(quick());
  sandbox.bind("codemode.search", echo);
  auto ended = eval_in(sandbox, "codemode.serach({q: 1})");
  ASSERT_EQ(ended.code, FailureCode::no_such_tool);
  EXPECT_NE(ended.message.find("codemode.serach"), std::string::npos) << ended.message;
  EXPECT_NE(ended.message.find("codemode.search"), std::string::npos) << ended.message;
  // Ordinary probes on the namespace still behave like a plain object.
  EXPECT_EQ(sandbox.eval("[typeof codemode.then, typeof codemode.toString, 'search' in codemode]")
                .value(),
            R"(["undefined","function",true])");
}

TEST(Tools, E55_UnserializableArgumentIsRejectedAtTheCallSite) {
  Sandbox sandbox(quick());
  std::atomic<int> calls{0};
  sandbox.bind("codemode.echo", [&](std::string_view args) {
    ++calls;
    return std::string(args);
  });
  const Execution caught =
      sandbox.eval("try { codemode.echo({f: () => 1}); } catch (e) { [e.name, e.message] }");
  EXPECT_EQ(
      caught.value(),
      R"(["TypeError","the argument of codemode.echo has no JSON form: value.f is a function"])");
  EXPECT_EQ(calls.load(), 0);
  EXPECT_EQ(eval_in(sandbox, "codemode.echo(10n)").code, FailureCode::tool_argument);
  EXPECT_EQ(eval_in(sandbox, "codemode.echo(1, 2)").code, FailureCode::tool_argument);
  EXPECT_EQ(calls.load(), 0);
}

TEST(Tools, MaxToolCallsEndsTheRunWithToolError) {
  Options options = quick();
  options.max_tool_calls = 5;
  Sandbox sandbox(options);
  sandbox.bind("codemode.ping", [](std::string_view) { return std::string("1"); });
  auto ended = eval_in(sandbox, "for (;;) { try { codemode.ping(); } catch (e) {} }");
  ASSERT_EQ(ended.code, FailureCode::tool_error);
  EXPECT_NE(ended.message.find("max_tool_calls"), std::string::npos) << ended.message;
  EXPECT_EQ(ended.execution->usage().tool_calls, 5u);
}

TEST(Tools, AnswersAfterTheRunSettledAreRefused) {
  Sandbox sandbox(quick());
  std::promise<ToolReply> kept;
  sandbox.bind_async("codemode.slow", [&](std::string, ToolReply reply) { kept.set_value(reply); });
  EXPECT_EQ(sandbox.eval("codemode.slow(); 'done without waiting'").value(),
            R"("done without waiting")");
  ToolReply late = kept.get_future().get();
  EXPECT_FALSE(late.resolve("1"));
  EXPECT_FALSE(late.reject("too late"));
}

TEST(Tools, AReplyAnswersOnce) {
  Sandbox sandbox(quick());
  std::atomic<bool> second{true};
  sandbox.bind_async("codemode.twice", [&](std::string, ToolReply reply) {
    reply.resolve("1");
    second = reply.resolve("2");
  });
  EXPECT_EQ(sandbox.execute("async () => codemode.twice()").value(), "1");
  EXPECT_FALSE(second.load());
}

TEST(Tools, B08_PathsAreDottedIdentifiers) {
  Sandbox sandbox(quick());
  EXPECT_THROW(sandbox.bind("", echo), std::invalid_argument);
  EXPECT_THROW(sandbox.bind("codemode..x", echo), std::invalid_argument);
  EXPECT_THROW(sandbox.bind("code-mode.x", echo), std::invalid_argument);
  EXPECT_THROW(sandbox.bind("1abc", echo), std::invalid_argument);
  EXPECT_THROW(sandbox.bind("Math.evil", echo), std::invalid_argument);
  EXPECT_THROW(sandbox.bind("console", echo), std::invalid_argument);
  sandbox.bind("search", echo).bind("deep.er.still.tool", echo);
  EXPECT_EQ(sandbox.eval("[search(1), deep.er.still.tool(2)]").value(), "[1,2]");
}

// check_tool_path says beforehand what bind would refuse, in each language.
TEST(Tools, CheckToolPathAppliesEachLanguagesRule) {
  const std::vector<std::string> bound{"kv.get"};
  EXPECT_NO_THROW(check_tool_path(Language::javascript, "kv.set", bound));
  EXPECT_THROW(check_tool_path(Language::javascript, "kv", bound), std::invalid_argument);
  EXPECT_THROW(check_tool_path(Language::javascript, "console.x", {}), std::invalid_argument);
  EXPECT_NO_THROW(check_tool_path(Language::javascript, "search", {}));
  // Ruby needs a constant and a method, and reads kv.get and KV.get alike.
  EXPECT_THROW(check_tool_path(Language::ruby, "search", {}), std::invalid_argument);
  EXPECT_THROW(check_tool_path(Language::ruby, "Kv.get", bound), std::invalid_argument);
  EXPECT_THROW(check_tool_path(Language::ruby, "Math.evil", {}), std::invalid_argument);
  EXPECT_NO_THROW(check_tool_path(Language::ruby, "kv.set", bound));
  Sandbox sandbox(quick());
  sandbox.bind("kv.get", echo);
  EXPECT_THROW(sandbox.bind("kv", echo), std::invalid_argument);
}

TEST(Tools, B09_SharedPrefixIsOneNamespaceAndSandboxesAreIsolated) {
  Sandbox a(quick());
  Sandbox b(quick());
  a.bind("kv.get", [](std::string_view) { return std::string("\"a\""); });
  a.bind("kv.set", [](std::string_view) { return std::string("true"); });
  b.bind("kv.get", [](std::string_view) { return std::string("\"b\""); });
  EXPECT_EQ(a.eval("[kv.get(), kv.set(), Object.keys(kv).sort()]").value(),
            R"(["a",true,["get","set"]])");
  EXPECT_EQ(b.eval("[kv.get(), typeof kv.set]").value(), R"(["b","function"])");
  EXPECT_EQ(eval_in(b, "kv.set()").code, FailureCode::no_such_tool);
}

TEST(Tools, B11_OverlappingPathsAreRefusedAndLeaveTheRegistryUnchanged) {
  Sandbox sandbox(quick());
  sandbox.bind("a.x", echo);
  EXPECT_THROW(sandbox.bind("a.x", echo), std::invalid_argument);
  EXPECT_THROW(sandbox.bind("a", echo), std::invalid_argument);
  EXPECT_THROW(sandbox.bind("a.x.y", echo), std::invalid_argument);
  sandbox.bind("a.y", echo);
  sandbox.bind("a.xx", echo);
  EXPECT_EQ(sandbox.eval("Object.keys(a).sort()").value(), R"(["x","xx","y"])");
}

TEST(Tools, B33_FirstRunSealsRegistration) {
  Sandbox sandbox(quick());
  sandbox.eval("1");
  EXPECT_THROW(sandbox.bind("codemode.late", echo), std::invalid_argument);
  EXPECT_THROW(sandbox.preload("Late", "1"), std::invalid_argument);
}

TEST(Tools, ToolFunctionsCannotBeConstructedOrReachTheHost) {
  Sandbox sandbox(quick());
  sandbox.bind("codemode.echo", echo);
  EXPECT_EQ(eval_in(sandbox, "new codemode.echo(1)").code, FailureCode::guest_error);
  EXPECT_EQ(sandbox.eval("[typeof codemode.echo.prototype, codemode.echo.name]").value(),
            R"(["undefined","echo"])");
}

TEST(Tools, B22_OneSandboxSharedByThreadsSerialisesRuns) {
  Sandbox sandbox(quick(10));
  std::atomic<int> inside{0};
  std::atomic<int> most{0};
  sandbox.bind("codemode.enter", [&](std::string_view) {
    const int now = ++inside;
    most = std::max(most.load(), now);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    --inside;
    return std::string("1");
  });
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) {
        if (sandbox.eval("codemode.enter() + 1").value() == "2") ++ok;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(ok.load(), 20);
  EXPECT_EQ(most.load(), 1);
}

TEST(Tools, B22_ManySandboxesRunInParallel) {
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&ok, t] {
      Sandbox sandbox(quick(10));
      sandbox.bind("codemode.id", [t](std::string_view) { return std::to_string(t); });
      for (int i = 0; i < 20; ++i) {
        if (sandbox.eval("codemode.id() * 2").value() == std::to_string(t * 2)) ++ok;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(ok.load(), 80);
}

}  // namespace
}  // namespace corral::sandbox
