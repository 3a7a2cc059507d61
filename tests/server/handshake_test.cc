// The WebSocket opening handshake's Sec-WebSocket-Key and
// Sec-WebSocket-Version (RFC 6455 4.2.1, 4.2.2) against a real server,
// through raw sockets: no client library sends a bad key. A refused upgrade
// gets 400 (or 426) with a JSON body and no upgrade; the server answers the
// next request and still upgrades a good key.
#include <string>
#include <vector>

#include "server/http_session.hpp"
#include "server_test_util.hpp"

namespace corral::server::testing {
namespace {

struct Answer {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;
  bool closed = false;  // the server closed the connection after answering
};

// Writes `head` on `socket` and reads one response (a 101's head only).
Answer exchange(tcp::socket& socket, const std::string& head, bool expect_close) {
  asio::write(socket, asio::buffer(head + "\r\n"));
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  http::read(socket, buffer, parser);
  Answer answer;
  answer.status = parser.get().result_int();
  answer.body = parser.get().body();
  for (const auto& field : parser.get())
    answer.headers[std::string(field.name_string())] = std::string(field.value());
  if (expect_close) {
    char byte;
    beast::error_code ec;
    socket.read_some(asio::buffer(&byte, 1), ec);
    answer.closed = ec == asio::error::eof || ec == asio::error::connection_reset;
  }
  return answer;
}

std::string upgrade(const std::string& key_and_version) {
  std::string head =
      "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n";
  head += key_and_version;
  return head;
}

std::string key(const std::string& value) {
  std::string header = "Sec-WebSocket-Key: ";
  header += value;
  header += "\r\n";
  return header;
}
const std::string kVersion = "Sec-WebSocket-Version: 13\r\n";
const std::string kGoodKey = "dGhlIHNhbXBsZSBub25jZQ==";  // RFC 6455's own sample

class Handshake : public ::testing::Test {
 protected:
  void SetUp() override {
    Options options = test_options();
    options.logger = log_.logger();
    server_ = std::make_unique<Server>(std::move(options));
    server_->listen();
    port_ = server_->address().port;
  }
  void TearDown() override { server_->close(); }

  tcp::socket connect() {
    tcp::socket socket(ioc_);
    socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_));
    bound_reads(socket.native_handle());
    return socket;
  }

  asio::io_context ioc_;
  LogSink log_;
  std::unique_ptr<Server> server_;
  std::uint16_t port_ = 0;
};

TEST_F(Handshake, ABadKeyIsRefusedWith400AndNoUpgrade) {
  struct Case {
    std::string headers;
    const char* why;
  };
  const std::vector<Case> cases = {
      {kVersion, "no key"},
      {kVersion + key(""), "an empty key"},
      {kVersion + key("dGhlIHNhbXBsZSBub25jZQ="), "23 characters"},
      {kVersion + key("dGhlIHNhbXBsZSBub25jZQ==="), "25 characters"},
      {kVersion + key("dGhlIHNhbXBsZSBub25jZ!=="), "not base64"},
      {kVersion + key("dGhlIHNhbXBsZSBub25j ZQ=="), "a space inside"},
      {kVersion + key("dGhlIHNhbXBsZSBub25jZQ%3D%3D"), "URL-encoded"},
      {kVersion + key("AAAAAAAAAAAAAAAAAAAA"), "base64 of 15 bytes"},
      {kVersion + key("AAAAAAAAAAAAAAAAAAAAAAAA"), "base64 of 18 bytes, 24 characters"},
      {kVersion + key("AAAAAAAAAAAAAAAAAAAAAAA="), "base64 of 17 bytes, 24 characters"},
      {kVersion + key("dGhlIHNhbXBsZSBub25jZR=="), "non-canonical padding bits"},
      {kVersion + key("dGhlIHNhbXBsZSBub25jZQ-_"), "base64url"},
      {kVersion + key(kGoodKey) + key(kGoodKey), "two keys"},
  };
  for (const Case& c : cases) {
    tcp::socket socket = connect();
    Answer answer = exchange(socket, upgrade(c.headers), true);
    EXPECT_EQ(answer.status, 400) << c.why;
    EXPECT_EQ(answer.headers["Content-Type"], "application/json") << c.why;
    EXPECT_NE(answer.body.find("Sec-WebSocket-Key"), std::string::npos) << c.why << answer.body;
    EXPECT_EQ(json::parse(answer.body).at("error").as_string().find("Bad Request: "), 0u);
    EXPECT_EQ(answer.headers.count("Sec-WebSocket-Accept"), 0u) << c.why;
    EXPECT_TRUE(answer.closed) << c.why;
  }
  EXPECT_TRUE(log_.wait_for("refused a WebSocket upgrade from "));
  expect_healthy(port_);
}

TEST_F(Handshake, AVersionOtherThan13Gets426AndTheConnectionGoesOn) {
  for (const std::string& version :
       {std::string(), std::string("Sec-WebSocket-Version: 8\r\n"),
        std::string("Sec-WebSocket-Version: 14\r\n"),
        std::string("Sec-WebSocket-Version: 13, 8\r\n"), kVersion + kVersion}) {
    tcp::socket socket = connect();
    Answer answer = exchange(socket, upgrade(version + key(kGoodKey)), false);
    EXPECT_EQ(answer.status, 426) << version;
    EXPECT_EQ(answer.headers["Sec-WebSocket-Version"], "13") << version;
    EXPECT_NE(answer.body.find("version 13"), std::string::npos) << answer.body;
    // Not upgraded: the same connection answers the next request.
    Answer next =
        exchange(socket, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n", true);
    EXPECT_EQ(next.status, 200) << version;
    EXPECT_EQ(next.body, "ok");
  }
  expect_healthy(port_);
}

TEST_F(Handshake, AGoodKeyStillUpgrades) {
  for (const std::string& good : {kGoodKey, std::string("AAAAAAAAAAAAAAAAAAAAAA=="),
                                  std::string("/////////////////////w==")}) {
    tcp::socket socket = connect();
    Answer answer = exchange(socket, upgrade(kVersion + key(good)), false);
    EXPECT_EQ(answer.status, 101) << good;
  }
  tcp::socket socket = connect();
  Answer answer = exchange(socket, upgrade(kVersion + key(kGoodKey)), false);
  ASSERT_EQ(answer.status, 101);
  EXPECT_EQ(answer.headers["Sec-WebSocket-Accept"], "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
  expect_healthy(port_);
}

TEST(WebSocketKey, IsTheCanonicalBase64Of16Bytes) {
  EXPECT_TRUE(is_websocket_key("dGhlIHNhbXBsZSBub25jZQ=="));
  EXPECT_TRUE(is_websocket_key("AAAAAAAAAAAAAAAAAAAAAA=="));
  EXPECT_TRUE(is_websocket_key("+/+/+/+/+/+/+/+/+/+/+w=="));
  EXPECT_FALSE(is_websocket_key(""));
  EXPECT_FALSE(is_websocket_key("dGhlIHNhbXBsZSBub25jZQ"));
  EXPECT_FALSE(is_websocket_key("dGhlIHNhbXBsZSBub25jZB=="));
  EXPECT_FALSE(is_websocket_key("dGhlIHNhbXBsZSBub25jZ===="));
  EXPECT_FALSE(is_websocket_key(std::string_view("dGhlIHNhbXBsZSBub25jZ\0==", 24)));
}

}  // namespace
}  // namespace corral::server::testing
