// src/server/http_session.hpp: one HTTP connection: the probes, and the
// gate every WebSocket upgrade passes (acceptance flag, identity hook,
// acceptance flag again) before it becomes a WebSocketSession.
#pragma once

#include <boost/beast/http.hpp>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "server/state.hpp"

namespace corral::server {

namespace http = beast::http;

// Answers a connection refused by a connection cap: `503` with a JSON body
// naming `reason` and Retry-After: 1, then closes it (within 1 s whatever the
// peer does). Counts a connection rejection.
void refuse_connection(const std::shared_ptr<ServerState>& state, Protocol::socket&& socket,
                       const std::string& reason);

// True iff `key` is a Sec-WebSocket-Key RFC 6455 4.2.1 allows: the canonical
// base64 of exactly 16 bytes.
bool is_websocket_key(std::string_view key);

class HttpSession : public Session, public std::enable_shared_from_this<HttpSession> {
 public:
  // `slot`: the connection's place under the connection caps
  // (ServerState::admit_connection), handed on with the connection.
  HttpSession(std::shared_ptr<ServerState> state, Protocol::socket&& socket,
              std::string remote_address, std::shared_ptr<void> slot);
  ~HttpSession() override;

  void run();

  // Session
  void heartbeat() override {}
  void shut_down() override;
  void terminate() override;

 private:
  void do_wait();
  void on_wait(beast::error_code ec, std::size_t bytes);
  void do_read();
  void on_read(beast::error_code ec, std::size_t bytes);
  void on_header(beast::error_code ec, std::size_t bytes);
  void handle_request();
  // `version_header`: adds Sec-WebSocket-Version: 13 (a 426 to an upgrade).
  void respond(http::status status, std::string body, std::string content_type = "text/plain",
               bool version_header = false);
  void on_write(bool keep_alive, beast::error_code ec, std::size_t bytes);
  // Answers an upgrade whose Sec-WebSocket-Version is not exactly 13 with
  // 426 (and Sec-WebSocket-Version: 13), one whose Sec-WebSocket-Key is
  // missing, repeated or not the base64 of 16 bytes with 400; false then.
  bool check_handshake();
  void handle_upgrade();
  void on_decision(Decision decision);
  // Writes a bodiless status line with Connection: close, then closes.
  void refuse(http::status status);
  void end();

  std::shared_ptr<ServerState> state_;
  Stream stream_;
  std::string remote_address_;
  std::shared_ptr<void> slot_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::request<http::string_body> request_;
  std::shared_ptr<void> response_;
  bool first_ = true;
  bool upgraded_ = false;
  bool shutting_down_ = false;
  bool ended_ = false;
};

}  // namespace corral::server
