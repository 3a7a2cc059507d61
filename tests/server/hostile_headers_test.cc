// Foreign Host and Origin headers against a real executor server, through
// raw sockets (so the exact bytes reach the server): a page on another
// site, a rebinding name, malformed and duplicate headers. After each case
// the server still answers /healthz and runs a trivial execute.
#include <string>

#include "server_test_util.hpp"

namespace corral::server::testing {
namespace {

struct RawReply {
  int status = 0;
  std::string text;  // the whole answer, head and body
};

// Writes `head` (a request line and header lines, without the blank line)
// on a fresh connection and reads the answer until the server closes.
RawReply raw_exchange(std::uint16_t port, const std::string& head) {
  asio::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  bound_reads(socket.native_handle());
  asio::write(socket, asio::buffer(head + "\r\n"));
  RawReply reply;
  char buffer[4096];
  beast::error_code ec;
  while (!ec) {
    const std::size_t n = socket.read_some(asio::buffer(buffer), ec);
    reply.text.append(buffer, n);
    // An accepted upgrade stays open: its status line is all we need.
    if (reply.text.rfind("HTTP/1.1 101", 0) == 0 &&
        reply.text.find("\r\n\r\n") != std::string::npos)
      break;
  }
  if (reply.text.size() > 12) reply.status = std::stoi(reply.text.substr(9, 3));
  return reply;
}

std::string upgrade(const std::string& extra) {
  return "GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
         "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n" +
         extra;
}

class HostileHeaders : public ::testing::Test {
 protected:
  void SetUp() override {
    Options options = test_options();
    options.allowed_origins = {"https://app.example"};
    options.logger = log_.logger();
    server_ = std::make_unique<Server>(std::move(options));
    server_->listen();
    port_ = server_->address().port;
  }
  void TearDown() override { server_->close(); }

  LogSink log_;
  std::unique_ptr<Server> server_;
  std::uint16_t port_ = 0;
};

TEST_F(HostileHeaders, AnUpgradeFromAForeignOriginIsRefusedWithAClearBody) {
  const RawReply reply =
      raw_exchange(port_, upgrade("Host: 127.0.0.1\r\nOrigin: https://evil.example\r\n"));
  EXPECT_EQ(reply.status, 403);
  EXPECT_NE(reply.text.find("Forbidden: the Origin https://evil.example is not allowed."),
            std::string::npos)
      << reply.text;
  EXPECT_NE(reply.text.find("Connection: close"), std::string::npos) << reply.text;
  EXPECT_TRUE(log_.wait_for("the Origin https://evil.example is not allowed"));
  expect_healthy(port_);
}

TEST_F(HostileHeaders, UpgradesWithoutAnOriginOrWithAnAllowedOneAreAccepted) {
  EXPECT_EQ(raw_exchange(port_, upgrade("Host: 127.0.0.1\r\n")).status, 101);
  EXPECT_EQ(
      raw_exchange(port_, upgrade("Host: 127.0.0.1\r\nOrigin: https://app.example\r\n")).status,
      101);
  EXPECT_EQ(
      raw_exchange(port_, upgrade("Host: localhost:1\r\nOrigin: http://localhost:3000\r\n")).status,
      101);
  // The Beast client (no Origin) the other tests use gets in too.
  RawSocket socket(port_);
  EXPECT_EQ(socket.call(1, "protocolVersion").at("result"), kProtocolVersion);
  expect_healthy(port_);
}

TEST_F(HostileHeaders, EveryHostileHostOrOriginIsRefusedAndTheServerStays) {
  struct Case {
    std::string head;
    int status;
  };
  const std::vector<Case> cases = {
      {upgrade("Host: 127.0.0.1.attacker.example\r\n"), 403},
      {upgrade("Host: attacker.example\r\n"), 403},
      {upgrade("Host: 127.0.0.1\r\nOrigin: null\r\n"), 403},
      {upgrade("Host: 127.0.0.1\r\nOrigin: https://app.example/path\r\n"), 403},
      {upgrade("Host: 127.0.0.1\r\nOrigin: https://app.example:8443\r\n"), 403},
      {upgrade("Host: 127.0.0.1\r\nOrigin: https://app.example\r\nOrigin: https://app.example\r\n"),
       403},
      {upgrade("Host: 127.1\r\n"), 400},
      {upgrade("Host: 0x7f.1\r\n"), 400},
      {upgrade("Host: a@127.0.0.1\r\n"), 400},
      {upgrade("Host: 127.0.0.1\r\nHost: 127.0.0.1\r\n"), 400},
      {upgrade(""), 400},
      {upgrade("Host: " + std::string(4000, 'a') + "\r\n"), 400},
      {upgrade("Host: l\xc3\xb6"
               "calhost\r\n"),
       400},
      {"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1.attacker.example\r\n", 403},
      {"POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: https://evil.example\r\n"
       "Content-Length: 0\r\n",
       403},
      {"GET /readyz HTTP/1.1\r\nHost: \r\n", 400},
  };
  for (const Case& c : cases) {
    const RawReply reply = raw_exchange(port_, c.head);
    EXPECT_EQ(reply.status, c.status) << c.head << "\n" << reply.text;
    EXPECT_NE(reply.text.find(R"({"error":")"), std::string::npos) << reply.text;
    expect_healthy(port_);
  }
}

TEST_F(HostileHeaders, ProbesFromNonBrowserClientsStillAnswer) {
  EXPECT_EQ(raw_exchange(port_, "GET /healthz HTTP/1.0\r\n").status, 200);
  EXPECT_EQ(
      raw_exchange(port_, "GET /healthz HTTP/1.1\r\nHost: [::1]:9\r\nConnection: close\r\n").status,
      200);
  EXPECT_EQ(raw_exchange(port_, "GET /readyz HTTP/1.1\r\nHost: LOCALHOST.\r\nConnection: close\r\n")
                .status,
            200);
}

TEST(HostileHeadersIpv6, TheClientBracketsAnIpv6HostAndTheGuardTakesIt) {
  Options options = test_options();
  options.host = "::1";
  Server server(std::move(options));
  try {
    server.listen();
  } catch (const std::system_error& e) {
    GTEST_SKIP() << "no IPv6 loopback here: " << e.what();
  }
  auto client =
      client::Client::connect("ws://[::1]:" + std::to_string(server.address().port) + "/");
  const auto outcome = client->execute(request_of("async () => 6 * 7"));
  ASSERT_TRUE(outcome.ok()) << outcome.failure().message;
  EXPECT_EQ(outcome.execution().value(), "42");
  client->close();
  server.close();
}

}  // namespace
}  // namespace corral::server::testing
