// The executor protocol over a real socket: version, execute, the bridge,
// several runs on one socket, and every malformed message's typed answer.
#include <atomic>
#include <thread>

#include "server/server_test_util.hpp"

namespace corral::server::testing {
namespace {

class Protocol : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<Server>(test_options());
    server_->listen();
    port_ = server_->address().port;
  }
  std::unique_ptr<Server> server_;
  std::uint16_t port_ = 0;
};

const json::object& result_of(const json::value& reply) { return reply.at("result").as_object(); }

TEST_F(Protocol, AnswersItsVersion) {
  RawSocket socket(port_);
  json::value reply = socket.call(1, "protocolVersion");
  EXPECT_EQ(reply.at("jsonrpc"), "2.0");
  EXPECT_EQ(reply.at("id"), 1);
  EXPECT_EQ(reply.at("result"), kProtocolVersion);
}

TEST_F(Protocol, ExecuteReturnsTheExecutionEnvelope) {
  RawSocket socket(port_);
  json::value reply = socket.call(
      7, "execute", execute_params("async () => { console.log('hi'); return [1, 2]; }"));
  const json::object& result = result_of(reply);
  ASSERT_EQ(result.at("ok"), true) << json::serialize(reply);
  const json::object& execution = result.at("execution").as_object();
  EXPECT_EQ(json::serialize(execution.at("value")), "[1,2]");
  EXPECT_EQ(execution.at("stdout"), "hi\n");
  EXPECT_EQ(execution.at("failed"), false);
}

TEST_F(Protocol, AGuestErrorIsAFailureEnvelope) {
  RawSocket socket(port_);
  json::value reply = socket.call(1, "execute", execute_params("throw new Error('boom')"));
  const json::object& result = result_of(reply);
  ASSERT_EQ(result.at("ok"), false);
  EXPECT_EQ(result.at("failure").at("code"), "guest_error");
  EXPECT_NE(std::string(result.at("failure").at("message").as_string()).find("boom"),
            std::string::npos);
}

TEST_F(Protocol, BadExecuteParamsAreInvalidRequestInsideTheEnvelope) {
  RawSocket socket(port_);
  const std::vector<std::pair<json::value, std::string>> cases = {
      {nullptr, "params"},
      {json::object{{"code", 1}}, "code must be a string"},
      {json::object{{"code", "  "}}, "code is empty"},
      {json::object{{"code", "1"}, {"tools", "x"}}, "tools must be an array"},
      {json::object{{"code", "1"}, {"tools", json::array{json::object{{"name", "a-b"}}}}},
       "tools[0].name"},
      {json::object{
           {"code", "1"},
           {"tools", json::array{json::object{{"name", "a"}}, json::object{{"name", "a"}}}}},
       "collides"},
      {json::object{{"code", "1"}, {"timeout", -5}}, "timeout must be a positive"},
      {json::object{{"code", "1"}, {"timeout", "1s"}}, "timeout must be a positive"},
      {json::object{{"code", "1"}, {"memory", 5}}, "no parameter \"memory\""},
      {json::object{{"code", "1"}, {"language", "cobol"}}, "language must be javascript, typescript or ruby"},
      {json::object{{"code", "1"}, {"language", 1}}, "language must be"},
  };
  std::int64_t id = 0;
  for (const auto& [params, needle] : cases) {
    json::object request{{"jsonrpc", "2.0"}, {"id", ++id}, {"method", "execute"}};
    if (!params.is_null()) request["params"] = params;
    socket.send(request);
    json::value reply = socket.receive();
    const json::object& result = result_of(reply);
    EXPECT_EQ(result.at("ok"), false) << needle;
    EXPECT_EQ(result.at("failure").at("code"), "invalid_request") << needle;
    EXPECT_NE(std::string(result.at("failure").at("message").as_string()).find(needle),
              std::string::npos)
        << json::serialize(reply);
  }
}

TEST_F(Protocol, MalformedMessagesGetJsonRpcErrors) {
  RawSocket socket(port_);
  socket.send(std::string("{not json"));
  EXPECT_EQ(socket.receive().at("error").at("code"), -32700);
  socket.send(std::string("[]"));
  EXPECT_EQ(socket.receive().at("error").at("code"), -32600);
  socket.send(std::string(R"({"jsonrpc":"1.0","id":1,"method":"execute"})"));
  EXPECT_EQ(socket.receive().at("error").at("code"), -32600);
  socket.send(std::string(R"({"jsonrpc":"2.0","id":{},"method":"execute"})"));
  EXPECT_EQ(socket.receive().at("error").at("code"), -32600);
  json::value unknown = socket.call(5, "launch");
  EXPECT_EQ(unknown.at("error").at("code"), -32601);
  EXPECT_EQ(unknown.at("error").at("data").at("code"), "invalid_request");
  EXPECT_EQ(unknown.at("id"), 5);
  // Still usable afterwards.
  EXPECT_EQ(socket.call(6, "protocolVersion").at("result"), kProtocolVersion);
}

TEST_F(Protocol, IdsComeBackByteForByte) {
  RawSocket socket(port_);
  // Each would come back re-rendered through a double or unescaped.
  for (const std::string token :
       {"123456789012345678901234567890", "1e2", "-0", "1.50", R"("caf\u00e9 \/")"}) {
    socket.send(R"({"jsonrpc":"2.0","id":)" + token + R"(,"method":"protocolVersion"})");
    const std::string reply = socket.receive_text();
    EXPECT_NE(reply.find(R"("id":)" + token + ","), std::string::npos) << reply;
  }
  // An execute's id, in its tool.call and in its answer.
  const std::string id = "123456789012345678901234567890";
  socket.send(R"({"jsonrpc":"2.0","id":)" + id +
              R"(,"method":"execute","params":{"code":"async () => (await codemode.t({})).v",)" +
              R"("tools":[{"name":"t","description":"t","inputSchema":{}}]}})");
  const std::string call_text = socket.receive_text();
  EXPECT_NE(call_text.find(R"("execution":)" + id + ","), std::string::npos) << call_text;
  const json::value call = json::parse(call_text);
  socket.send(
      json::object{{"jsonrpc", "2.0"}, {"id", call.at("id")}, {"result", json::object{{"v", 9}}}});
  const std::string reply = socket.receive_text();
  EXPECT_EQ(reply.rfind(R"({"jsonrpc":"2.0","id":)" + id + ",", 0), 0u) << reply;
  EXPECT_EQ(json::serialize(json::parse(reply).at("result").at("execution").at("value")), "9");
}

TEST_F(Protocol, ToolCallsCrossTheSameSocket) {
  RawSocket socket(port_);
  json::object params = execute_params(
      "async () => { const r = await codemode.math.add({a: 2, b: 3}); return r.sum * 10; }");
  params["tools"] = json::array{
      json::object{{"name", "math.add"}, {"description", "adds"}, {"inputSchema", json::object{}}}};
  socket.send(
      json::object{{"jsonrpc", "2.0"}, {"id", "run-1"}, {"method", "execute"}, {"params", params}});
  json::value call = socket.receive();
  ASSERT_EQ(call.at("method"), "tool.call") << json::serialize(call);
  EXPECT_EQ(call.at("params").at("execution"), "run-1");
  EXPECT_EQ(call.at("params").at("name"), "math.add");
  EXPECT_EQ(json::serialize(call.at("params").at("input")), R"({"a":2,"b":3})");
  socket.send(json::object{
      {"jsonrpc", "2.0"}, {"id", call.at("id")}, {"result", json::object{{"sum", 5}}}});
  json::value reply = socket.receive();
  EXPECT_EQ(reply.at("id"), "run-1");
  ASSERT_EQ(result_of(reply).at("ok"), true) << json::serialize(reply);
  EXPECT_EQ(json::serialize(result_of(reply).at("execution").at("value")), "50");
  EXPECT_EQ(result_of(reply).at("execution").at("usage").at("tool_calls"), 1);
}

TEST_F(Protocol, RubyCodeRunsAndCallsToolsAsCodemodeConstants) {
  RawSocket socket(port_);
  json::object params =
      execute_params("puts RUBY_ENGINE; Codemode::Math.add(a: 2, b: 3)['sum'] * 10");
  params["language"] = "ruby";
  params["tools"] = json::array{json::object{{"name", "math.add"}}};
  socket.send(
      json::object{{"jsonrpc", "2.0"}, {"id", "rb"}, {"method", "execute"}, {"params", params}});
  json::value call = socket.receive();
  ASSERT_EQ(call.at("method"), "tool.call") << json::serialize(call);
  EXPECT_EQ(call.at("params").at("name"), "math.add");
  EXPECT_EQ(json::serialize(call.at("params").at("input")), R"({"a":2,"b":3})");
  socket.send(json::object{
      {"jsonrpc", "2.0"}, {"id", call.at("id")}, {"result", json::object{{"sum", 5}}}});
  json::value reply = socket.receive();
  ASSERT_EQ(result_of(reply).at("ok"), true) << json::serialize(reply);
  EXPECT_EQ(json::serialize(result_of(reply).at("execution").at("value")), "50");
  EXPECT_EQ(result_of(reply).at("execution").at("stdout"), "mruby\n");

  // The same code as JavaScript is a compile error: the language is per request.
  params.erase("tools");
  params["language"] = "javascript";
  json::value js = socket.call(2, "execute", params);
  EXPECT_EQ(result_of(js).at("failure").at("code"), "compile_error") << json::serialize(js);

  json::object raise = execute_params("raise ArgumentError, 'no such thing'");
  raise["language"] = "ruby";
  json::value error = socket.call(3, "execute", raise);
  EXPECT_EQ(result_of(error).at("failure").at("code"), "guest_error");
  EXPECT_NE(
      std::string(result_of(error).at("failure").at("message").as_string()).find("ArgumentError"),
      std::string::npos)
      << json::serialize(error);

  // `$x` is a JavaScript name Ruby cannot spell as a constant path.
  raise["tools"] = json::array{json::object{{"name", "$x"}}};
  json::value unspellable = socket.call(4, "execute", raise);
  EXPECT_EQ(result_of(unspellable).at("failure").at("code"), "invalid_request")
      << json::serialize(unspellable);
}

TEST_F(Protocol, AToolErrorAnswerRejectsTheGuestsPromise) {
  RawSocket socket(port_);
  json::object params = execute_params(
      "async () => { try { await codemode.lookup({}); return 'no'; } catch (e) { return "
      "e.message; } }");
  params["tools"] = json::array{json::object{{"name", "lookup"}}};
  socket.send(
      json::object{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "execute"}, {"params", params}});
  json::value call = socket.receive();
  socket.send(json::object{{"jsonrpc", "2.0"},
                           {"id", call.at("id")},
                           {"error", json::object{{"code", -32000}, {"message", "not found"}}}});
  json::value reply = socket.receive();
  ASSERT_EQ(result_of(reply).at("ok"), true) << json::serialize(reply);
  EXPECT_EQ(result_of(reply).at("execution").at("value"), "not found");
}

TEST_F(Protocol, SeveralExecutionsRunOnOneSocket) {
  RawSocket socket(port_);
  // Two runs that each wait on a tool: both calls must arrive before either
  // is answered, so both runs are in flight at once.
  for (int id = 1; id <= 2; ++id) {
    json::object params =
        execute_params("async () => (await codemode.wait({})).n + " + std::to_string(id));
    params["tools"] = json::array{json::object{{"name", "wait"}}};
    socket.send(
        json::object{{"jsonrpc", "2.0"}, {"id", id}, {"method", "execute"}, {"params", params}});
  }
  json::value first = socket.receive();
  json::value second = socket.receive();
  ASSERT_EQ(first.at("method"), "tool.call");
  ASSERT_EQ(second.at("method"), "tool.call");
  EXPECT_NE(first.at("params").at("execution"), second.at("params").at("execution"));
  for (const json::value* call : {&second, &first}) {
    socket.send(json::object{
        {"jsonrpc", "2.0"}, {"id", call->at("id")}, {"result", json::object{{"n", 100}}}});
  }
  std::map<std::int64_t, std::string> values;
  for (int i = 0; i < 2; ++i) {
    json::value reply = socket.receive();
    values[reply.at("id").as_int64()] =
        json::serialize(result_of(reply).at("execution").at("value"));
  }
  EXPECT_EQ(values[1], "101");
  EXPECT_EQ(values[2], "102");
}

TEST_F(Protocol, ARunningIdCannotBeReused) {
  RawSocket socket(port_);
  json::object params = execute_params("async () => (await codemode.wait({}))");
  params["tools"] = json::array{json::object{{"name", "wait"}}};
  socket.send(
      json::object{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "execute"}, {"params", params}});
  json::value call = socket.receive();
  ASSERT_EQ(call.at("method"), "tool.call");
  socket.send(
      json::object{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "execute"}, {"params", params}});
  json::value refused = socket.receive();
  EXPECT_EQ(refused.at("error").at("code"), -32600);
  socket.send(json::object{{"jsonrpc", "2.0"}, {"id", call.at("id")}, {"result", 4}});
  EXPECT_EQ(json::serialize(result_of(socket.receive()).at("execution").at("value")), "4");
}

TEST_F(Protocol, AnAnswerAfterTheRunSettledIsDroppedAndTheSocketGoesOn) {
  RawSocket socket(port_);
  // The guest starts a call it never awaits and returns at once.
  json::object params =
      execute_params("async () => { codemode.later({}).catch(() => {}); return 'done'; }");
  params["tools"] = json::array{json::object{{"name", "later"}}};
  socket.send(
      json::object{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "execute"}, {"params", params}});
  json::value call;
  json::value result;
  for (int i = 0; i < 2; ++i) {
    json::value message = socket.receive();
    (message.as_object().contains("method") ? call : result) = message;
  }
  ASSERT_EQ(call.at("method"), "tool.call");
  EXPECT_EQ(result.at("result").at("execution").at("value"), "done");
  // The answer reaches nothing: no reply, and the socket keeps serving.
  socket.send(json::object{{"jsonrpc", "2.0"}, {"id", call.at("id")}, {"result", 1}});
  EXPECT_EQ(socket.call(2, "protocolVersion").at("result"), kProtocolVersion);
}

TEST_F(Protocol, AClientThatVanishesMidToolCallHasItsRunCancelled) {
  // Issue 14.5: once nobody can receive a run's answer the run is cancelled
  // (docs/protocol.md, "Tool calls"); the waiting call is rejected first.
  std::mutex mutex;
  std::condition_variable cv;
  std::optional<pool::Event> finished;
  server_->pool().subscribe([&](const pool::Event& event) {
    if (event.kind != pool::Event::Kind::execution_finished) return;
    std::lock_guard lock(mutex);
    finished = event;
    cv.notify_all();
  });
  {
    RawSocket socket(port_);
    // Whether or not the guest sees the rejection first, it cannot end on
    // its own: only the cancellation ends it before its 60 s timeout.
    json::object params = execute_params(
        "async () => { try { await codemode.slow({}); } catch (e) { for (;;) {} } }", 60'000, true);
    params["tools"] = json::array{json::object{{"name", "slow"}}};
    socket.send(
        json::object{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "execute"}, {"params", params}});
    json::value call = socket.receive();
    ASSERT_EQ(call.at("method"), "tool.call");
    // The socket closes here without answering: the TCP connection just ends.
    beast::error_code ignored;
    socket.ws().next_layer().shutdown(tcp::socket::shutdown_both, ignored);
    socket.ws().next_layer().close(ignored);
  }
  std::unique_lock lock(mutex);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(20), [&] { return finished.has_value(); }));
  ASSERT_TRUE(finished->outcome.has_value());
  EXPECT_EQ(*finished->outcome, FailureCode::cancelled);
}

}  // namespace
}  // namespace corral::server::testing
