// Stopping: readiness fails first, the delay still accepts, the drain
// delivers every run that finishes inside it, then 1001 on every socket.
#include <future>
#include <thread>

#include "corral/client.hpp"
#include "server/server_test_util.hpp"

namespace corral::server::testing {
namespace {

using std::chrono::milliseconds;

json::object gated_run(std::int64_t id) {
  json::object params = execute_params("async () => 'done ' + (await codemode.gate({}))");
  params["tools"] = json::array{json::object{{"name", "gate"}}};
  return json::object{{"jsonrpc", "2.0"}, {"id", id}, {"method", "execute"}, {"params", params}};
}

TEST(Drain, UnderLoadResultsAreDeliveredThenEverySocketCloses1001) {
  Options options = test_options();
  options.shutdown_delay = milliseconds(300);
  options.shutdown_drain = milliseconds(10'000);
  options.pool.max_workers = 3;  // two gated runs, and one that arrives during the delay
  Server server(std::move(options));
  server.listen();
  const std::uint16_t port = server.address().port;

  RawSocket socket(port);
  socket.send(gated_run(1));
  socket.send(gated_run(2));
  json::value call1 = socket.receive();
  json::value call2 = socket.receive();
  ASSERT_EQ(call1.at("method"), "tool.call");
  ASSERT_EQ(call2.at("method"), "tool.call");

  std::promise<void> closed;
  server.close([&closed] { closed.set_value(); });
  // Draining: readiness fails at once, liveness holds, and the delay still
  // accepts a new connection that can run.
  EXPECT_TRUE(server.draining());
  HttpReply ready = http_request(port, http::verb::get, "/readyz");
  EXPECT_EQ(ready.status, 503);
  EXPECT_EQ(ready.body, "not ready");
  EXPECT_EQ(http_request(port, http::verb::get, "/healthz").status, 200);
  {
    RawSocket late(port);
    json::value reply = late.call(9, "execute", execute_params("40 + 2"));
    EXPECT_EQ(json::serialize(reply.at("result").at("execution").at("value")), "42");
  }

  // Both gated runs finish inside the drain: both answers arrive, then 1001.
  // Each call is answered with its own run's id: the two runs are on two
  // workers, and either may call first.
  for (const json::value& call : {call1, call2}) {
    socket.send(json::object{
        {"jsonrpc", "2.0"}, {"id", call.at("id")}, {"result", call.at("params").at("execution")}});
  }
  std::map<std::int64_t, std::string> values;
  for (int i = 0; i < 2; ++i) {
    json::value reply = socket.receive();
    ASSERT_TRUE(reply.as_object().contains("result")) << json::serialize(reply);
    values[reply.at("id").as_int64()] =
        std::string(reply.at("result").at("execution").at("value").as_string());
  }
  EXPECT_EQ(values[1], "done 1");
  EXPECT_EQ(values[2], "done 2");
  EXPECT_EQ(socket.read_until_closed(), websocket::error::closed);
  EXPECT_EQ(socket.reason().code, 1001);
  EXPECT_EQ(socket.reason().reason, "server shutting down");
  closed.get_future().get();

  // The listener is gone.
  asio::io_context ioc;
  tcp::socket probe(ioc);
  beast::error_code ec;
  probe.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), ec);
  EXPECT_EQ(ec, asio::error::connection_refused);
}

TEST(Drain, ARunThatOutlivesTheDrainFailsConnectionBrokenBeforeThe1001) {
  Options options = test_options();
  options.shutdown_drain = milliseconds(200);
  Server server(std::move(options));
  server.listen();
  RawSocket socket(server.address().port);
  socket.send(gated_run(1));
  ASSERT_EQ(socket.receive().at("method"), "tool.call");
  std::thread closer([&server] { server.close(); });
  json::value reply = socket.receive();
  ASSERT_TRUE(reply.as_object().contains("result")) << json::serialize(reply);
  EXPECT_EQ(reply.at("result").at("ok"), false);
  EXPECT_EQ(reply.at("result").at("failure").at("code"), "connection_broken");
  EXPECT_EQ(reply.at("result").at("failure").at("retryable"), true);
  EXPECT_EQ(socket.read_until_closed(), websocket::error::closed);
  EXPECT_EQ(socket.reason().code, 1001);
  closer.join();
}

TEST(Drain, CloseIsMemoized) {
  Options options = test_options();
  options.shutdown_delay = milliseconds(100);
  Server server(std::move(options));
  server.listen();
  std::atomic<int> done{0};
  std::promise<void> first;
  std::promise<void> second;
  server.close([&] {
    ++done;
    first.set_value();
  });
  server.close([&] {
    ++done;
    second.set_value();
  });
  first.get_future().get();
  second.get_future().get();
  EXPECT_EQ(done.load(), 2);
  server.close();  // already closed: returns at once
  std::promise<void> third;
  server.close([&] { third.set_value(); });
  EXPECT_EQ(third.get_future().wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_EQ(server.pool().stats().workers_live, 0u);
}

TEST(Drain, AfterTheDelayNewUpgradesAre503) {
  Options options = test_options();
  options.shutdown_drain = milliseconds(10'000);
  Server server(std::move(options));
  server.listen();
  const std::uint16_t port = server.address().port;
  RawSocket socket(port);
  socket.send(gated_run(1));
  ASSERT_EQ(socket.receive().at("method"), "tool.call");
  std::promise<void> closed;
  server.close([&closed] { closed.set_value(); });
  // No delay: acceptance stops as soon as close() runs its first step; the
  // gated run keeps the drain open meanwhile.
  EXPECT_TRUE(eventually([&] { return !server.accepting(); }));
  EXPECT_EQ(raw_upgrade_status(port), 503);
  socket.send(json::object{{"jsonrpc", "2.0"}, {"id", "c1"}, {"result", 0}});
  socket.read_until_closed();
  closed.get_future().get();
}

}  // namespace
}  // namespace corral::server::testing
