// Bounds the server resolves: the clamped timeout, the response limit, the
// connection age, the heartbeat, and the message size.
#include <thread>

#include "corral/client.hpp"
#include "server/server_test_util.hpp"

namespace corral::server::testing {
namespace {

using std::chrono::milliseconds;

std::string url_of(const Server& server) {
  return "ws://127.0.0.1:" + std::to_string(server.address().port);
}

TEST(Bounds, TheFourClampedTimeoutsOfTheSeed) {
  Options options = test_options();
  options.pool.max_workers = 1;
  options.default_timeout = milliseconds(200);
  options.max_timeout = milliseconds(500);
  Server server(std::move(options));
  server.listen();
  auto client = client::Client::connect(url_of(server));
  const std::string spin = "async () => { for (;;) {} }";
  const std::vector<std::pair<client::Timeout, std::string>> cases = {
      {client::Timeout::server_default(), "Execution timed out at its 200 ms bound"},
      {client::Timeout::of(milliseconds(400)), "Execution timed out at its 400 ms bound"},
      {client::Timeout::of(milliseconds(5000)), "Execution timed out at its 500 ms bound"},
      {client::Timeout::widest(), "Execution timed out at its 500 ms bound"},
  };
  for (const auto& [timeout, expected] : cases) {
    const auto started = std::chrono::steady_clock::now();
    client::Outcome outcome = client->execute(request_of(spin, timeout));
    const auto took = std::chrono::steady_clock::now() - started;
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.failure().code, FailureCode::timeout);
    const std::string& message = outcome.failure().message;
    EXPECT_EQ(message.substr(0, message.find('.')), expected);
    EXPECT_LT(took, milliseconds(3000));
  }
}

TEST(Bounds, TheCeilingNeverPassesTheMaximumSupportedTimeout) {
  Options options = test_options();
  options.max_timeout = milliseconds(kMaxSupportedTimeout.count());
  EXPECT_NO_THROW(validate(options));
  // A configured ceiling above the supported maximum is clamped to it.
  options.max_timeout = milliseconds(kMaxSupportedTimeout.count() * 4);
  options.default_timeout = milliseconds(kMaxSupportedTimeout.count() * 2);
  Server server(std::move(options));
  server.listen();
  RawSocket socket(server.address().port);
  // The run finishes at once; its bound only has to be accepted by the pool.
  json::value reply = socket.call(1, "execute", execute_params("1", nullptr, true));
  EXPECT_EQ(reply.at("result").at("ok"), true) << json::serialize(reply);
}

TEST(Bounds, AResultOverTheResponseLimitIsResponseTooLarge) {
  Options options = test_options();
  options.response_limit = 2000;
  options.metrics = own_metrics();
  Server server(std::move(options));
  server.listen();
  auto client = client::Client::connect(url_of(server));

  client::Outcome small = client->execute(request_of("'x'.repeat(100)"));
  ASSERT_TRUE(small.ok()) << small.failure().message;

  client::Outcome big = client->execute(request_of("'x'.repeat(5000)"));
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.failure().code, FailureCode::response_too_large);
  EXPECT_NE(big.failure().message.find("above the response limit of 2000 bytes"), std::string::npos)
      << big.failure().message;

  // The logs count: a small value with a large console output is too large.
  client::Outcome chatty =
      client->execute(request_of("async () => { console.log('y'.repeat(3000)); return 1; }"));
  ASSERT_FALSE(chatty.ok());
  EXPECT_EQ(chatty.failure().code, FailureCode::response_too_large);

  // Escaping counts too: 1200 quotes are 2400 bytes once escaped.
  client::Outcome quoted = client->execute(request_of("'\"'.repeat(1200)"));
  ASSERT_FALSE(quoted.ok());
  EXPECT_EQ(quoted.failure().code, FailureCode::response_too_large);

  // The socket is still usable, and the instruments saw the outcome.
  EXPECT_TRUE(client->execute(request_of("2")).ok());
  EXPECT_NE(
      server.render_metrics().find("corral_executions_total{outcome=\"response_too_large\"} 3"),
      std::string::npos);
}

TEST(Bounds, AConnectionPastItsAgeClosesWith1000) {
  Options options = test_options();
  options.max_connection_age = milliseconds(300);
  Server server(std::move(options));
  server.listen();
  RawSocket socket(server.address().port);
  EXPECT_EQ(socket.call(1, "protocolVersion").at("result"), kProtocolVersion);
  beast::error_code ec = socket.read_until_closed();
  EXPECT_EQ(ec, websocket::error::closed);
  EXPECT_EQ(socket.reason().code, 1000);
  EXPECT_EQ(socket.reason().reason, "connection age limit");
}

TEST(Bounds, ASocketThatMissesAPingIsTerminatedAndOneThatAnswersStays) {
  Options options = test_options();
  options.ping_interval = milliseconds(100);
  options.metrics = own_metrics();
  Server server(std::move(options));
  server.listen();

  RawSocket live(server.address().port);
  std::thread reader([&live] { live.read_until_closed(); });  // answers every ping

  // A socket that completed the upgrade and then never reads: no pongs.
  RawSocket dead(server.address().port);
  auto& raw = dead.ws().next_layer();
  std::string bytes;
  beast::error_code ec;
  while (!ec) {
    char chunk[64];
    const std::size_t n = raw.read_some(asio::buffer(chunk), ec);
    bytes.append(chunk, n);
  }
  EXPECT_TRUE(ec == asio::error::eof || ec == asio::error::connection_reset) << ec.message();
  ASSERT_GE(bytes.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x89) << "the first frame was not a ping";

  // Meanwhile the live socket answered round after round.
  EXPECT_TRUE(eventually([&] { return live.pings() >= 4; }));
  EXPECT_TRUE(eventually([&] {
    return server.render_metrics().find("corral_connections_active 1\n") != std::string::npos;
  }));
  server.close();
  reader.join();
  EXPECT_EQ(live.reason().code, 1001);
}

TEST(Bounds, ZeroPingIntervalSendsNoPings) {
  Options options = test_options();
  options.ping_interval = milliseconds(0);
  options.max_connection_age = milliseconds(400);
  Server server(std::move(options));
  server.listen();
  RawSocket socket(server.address().port);
  socket.read_until_closed();
  EXPECT_EQ(socket.reason().reason, "connection age limit");
  EXPECT_EQ(socket.pings(), 0);
}

TEST(Bounds, AMessageOverTheMaximumIsRefusedFromItsHeaderAlone) {
  Options options = test_options();
  options.max_message_size = 1024;
  Server server(std::move(options));
  server.listen();
  RawSocket socket(server.address().port);
  // A masked text frame header announcing 1 MiB, and not one payload byte.
  const unsigned char header[] = {0x81, 0xFF, 0, 0, 0, 0, 0, 0x10, 0, 0, 1, 2, 3, 4};
  asio::write(socket.ws().next_layer(), asio::buffer(header, sizeof header));
  std::string bytes;
  beast::error_code ec;
  while (!ec && bytes.size() < 4) {
    char chunk[64];
    const std::size_t n = socket.ws().next_layer().read_some(asio::buffer(chunk), ec);
    bytes.append(chunk, n);
  }
  ASSERT_GE(bytes.size(), 4u) << ec.message();
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x88) << "expected a close frame";
  const int code =
      (static_cast<unsigned char>(bytes[2]) << 8) | static_cast<unsigned char>(bytes[3]);
  EXPECT_EQ(code, 1009);
}

TEST(Bounds, AMessageUnderTheMaximumIsServed) {
  Options options = test_options();
  options.max_message_size = 4096;
  Server server(std::move(options));
  server.listen();
  RawSocket socket(server.address().port);
  json::value reply =
      socket.call(1, "execute", execute_params("'" + std::string(3000, 'a') + "'.length"));
  EXPECT_EQ(json::serialize(reply.at("result").at("execution").at("value")), "3000");
}

}  // namespace
}  // namespace corral::server::testing
