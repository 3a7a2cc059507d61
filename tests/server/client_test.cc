// The shipped C++ client against a real server (and, for the version check,
// against a peer that speaks another protocol version).
#include <future>
#include <thread>

#include "corral/client.hpp"
#include "server/server_test_util.hpp"

namespace corral::server::testing {
namespace {

std::string url_of(const Server& server) {
  return "ws://127.0.0.1:" + std::to_string(server.address().port);
}

TEST(Client, ExecutesWithToolsAnsweredByItsHandler) {
  Server server(test_options());
  server.listen();
  auto client = client::Client::connect(url_of(server));
  client::ExecuteRequest request = request_of(
      "async () => { const a = await codemode.echo({n: 1}); "
      "const b = await codemode.kv.get({key: 'k'}); return [a.n, b]; }");
  request.tools = {{"echo", "returns its input", R"({"type":"object"})"}, {"kv.get", "", ""}};
  std::atomic<int> calls{0};
  client::Outcome outcome =
      client->execute(request, [&](const std::string& name, const std::string& input) {
        ++calls;
        if (name == "echo") return input;
        return std::string(R"("value of k")");
      });
  ASSERT_TRUE(outcome.ok()) << outcome.failure().message;
  EXPECT_EQ(outcome.execution().value(), R"([1,"value of k"])");
  EXPECT_EQ(calls.load(), 2);
}

TEST(Client, RunsRubyWhenTheRequestSaysSo) {
  Server server(test_options());
  server.listen();
  auto client = client::Client::connect(url_of(server));
  client::ExecuteRequest request = request_of("Codemode.echo(n: 41)['n'] + 1");
  request.language = sandbox::Language::ruby;
  request.tools = {{"echo", "returns its input", ""}};
  client::Outcome outcome =
      client->execute(request, [](const std::string&, const std::string& input) { return input; });
  ASSERT_TRUE(outcome.ok()) << outcome.failure().message;
  EXPECT_EQ(outcome.execution().value(), "42");
}

// `n` arrays nested around 0: [[[0]]] for 3.
std::string nested(int n) { return std::string(n, '[') + "0" + std::string(n, ']'); }

// Values up to the documented 128 levels cross every hop exactly (guest ->
// worker -> server -> client as a result; guest -> client as a tool
// argument; client -> guest as a tool answer). Boost's default parse depth
// of 32 turned each of them into null or a refused frame.
TEST(Client, ValuesNestedToTheDocumentedDepthCrossEveryHopExactly) {
  Server server(test_options());
  server.listen();
  auto client = client::Client::connect(url_of(server));
  const std::string deep = nested(128);
  for (const bool ruby : {false, true}) {
    SCOPED_TRACE(ruby ? "ruby" : "javascript");
    // The argument {v: 127 levels} and the result [v] are 128 levels each.
    client::ExecuteRequest request = request_of(
        ruby ? "deep = Codemode.deep({}); a = Codemode.echo(v: deep[0]); "
               "[a['v']] == deep ? [a['v']] : 'lost'"
             : "async () => { let v = 0; for (let i = 0; i < 127; i++) v = [v]; "
               "const back = await codemode.echo({v}); const answer = await codemode.deep({}); "
               "return JSON.stringify(back.v) === JSON.stringify(v) && "
               "JSON.stringify(answer) === JSON.stringify([v]) ? [back.v] : 'lost'; }");
    if (ruby) request.language = sandbox::Language::ruby;
    request.tools = {{"echo", "", ""}, {"deep", "", ""}};
    std::string argument;
    client::Outcome outcome =
        client->execute(request, [&](const std::string& name, const std::string& input) {
          if (name == "deep") return deep;
          argument = input;
          return input;
        });
    ASSERT_TRUE(outcome.ok()) << outcome.failure().message;
    EXPECT_EQ(outcome.execution().value(), deep);
    EXPECT_EQ(argument, "{\"v\":" + nested(127) + "}");
  }
}

TEST(Client, AValueDeeperThanTheDocumentedDepthIsUnserializableNamingIt) {
  Server server(test_options());
  server.listen();
  auto client = client::Client::connect(url_of(server));
  client::Outcome outcome = client->execute(
      request_of("async () => { let v = 0; for (let i = 0; i < 129; i++) v = [v]; return v; }"),
      nullptr);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.failure().code, FailureCode::unserializable_value);
  EXPECT_NE(outcome.failure().message.find("128"), std::string::npos) << outcome.failure().message;
  // and the connection serves the next run
  client::Outcome next = client->execute(request_of("1 + 1"), nullptr);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next.execution().value(), "2");
}

TEST(Client, AHandlerThatThrowsIsAToolErrorTheGuestCanCatch) {
  Server server(test_options());
  server.listen();
  auto client = client::Client::connect(url_of(server));
  client::ExecuteRequest request = request_of(
      "async () => { try { await codemode.fail({}); } catch (e) { return 'caught: ' + e.message; "
      "} }");
  request.tools = {{"fail", "", ""}};
  client::Outcome outcome =
      client->execute(request, [](const std::string&, const std::string&) -> std::string {
        throw std::runtime_error("disk on fire");
      });
  ASSERT_TRUE(outcome.ok()) << outcome.failure().message;
  EXPECT_EQ(outcome.execution().value(), R"("caught: disk on fire")");
}

TEST(Client, ExecutionsFromSeveralThreadsShareOneConnection) {
  Server server(test_options());
  server.listen();
  auto client = client::Client::connect(url_of(server));
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&, i] {
      client::ExecuteRequest request =
          request_of("async () => (await codemode.id({i: " + std::to_string(i) + "})).i * 2");
      request.tools = {{"id", "", ""}};
      client::Outcome outcome = client->execute(
          request, [](const std::string&, const std::string& input) { return input; });
      if (outcome.ok() && outcome.execution().value() == std::to_string(i * 2)) ++ok;
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(ok.load(), 6);
}

TEST(Client, NothingListeningIsUnavailable) {
  std::uint16_t port = 0;
  {
    asio::io_context ioc;
    tcp::acceptor acceptor(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    port = acceptor.local_endpoint().port();
  }
  try {
    client::Client::connect("ws://127.0.0.1:" + std::to_string(port));
    FAIL() << "connected to nothing";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), FailureCode::unavailable) << e.what();
  }
  try {
    client::Client::connect("http://127.0.0.1:1");
    FAIL() << "accepted an http URL";
  } catch (const Error& e) {
    // Retrying it elsewhere or later cannot help: not retryable.
    EXPECT_EQ(e.code(), FailureCode::invalid_request) << e.what();
    EXPECT_FALSE(e.retryable());
  }
}

// A peer that completes the upgrade and answers protocolVersion with
// another version.
TEST(Client, AnotherProtocolVersionIsProtocolMismatch) {
  asio::io_context ioc;
  tcp::acceptor acceptor(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const std::uint16_t port = acceptor.local_endpoint().port();
  std::thread peer([&] {
    websocket::stream<tcp::socket> ws(acceptor.accept());
    ws.accept();
    beast::flat_buffer buffer;
    ws.read(buffer);
    json::value request = json::parse(beast::buffers_to_string(buffer.data()));
    ws.text(true);
    ws.write(asio::buffer(json::serialize(json::object{
        {"jsonrpc", "2.0"}, {"id", request.at("id")}, {"result", "corral-executor/0"}})));
    beast::error_code ec;
    while (!ec) ws.read(buffer, ec);
  });
  try {
    client::Client::connect("ws://127.0.0.1:" + std::to_string(port));
    ADD_FAILURE() << "accepted another protocol version";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), FailureCode::protocol_mismatch);
    EXPECT_NE(std::string(e.what()).find("corral-executor/0"), std::string::npos) << e.what();
  }
  peer.join();
}

TEST(Client, AServerThatGoesAwayFailsWaitingExecutionsConnectionBroken) {
  Options options = test_options();
  options.shutdown_drain = std::chrono::milliseconds(100);
  Server server(std::move(options));
  server.listen();
  // Declared before the client: the tool thread may still be waiting on
  // them while the client closes.
  std::promise<void> called;
  std::promise<void> closed;
  std::shared_future<void> closed_future = closed.get_future().share();
  auto client = client::Client::connect(url_of(server));
  client::ExecuteRequest request = request_of("async () => await codemode.block({})");
  request.tools = {{"block", "", ""}};
  // The tool answers only once the server has closed: too late to matter.
  auto running = std::async(std::launch::async, [&] {
    return client->execute(request, [&](const std::string&, const std::string&) -> std::string {
      called.set_value();
      closed_future.wait();
      return "1";
    });
  });
  called.get_future().wait();
  server.close();
  closed.set_value();
  client::Outcome outcome = running.get();
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.failure().code, FailureCode::connection_broken);
  EXPECT_TRUE(outcome.failure().retryable());
  EXPECT_TRUE(eventually([&] { return !client->connected(); }));
  EXPECT_EQ(client->close_code(), 1001);
  EXPECT_EQ(client->close_reason(), "server shutting down");
}

}  // namespace
}  // namespace corral::server::testing
