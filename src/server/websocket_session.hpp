// src/server/websocket_session.hpp: one executor protocol connection.
//
// Beast's shape: a strand per connection, do_x()/on_x() pairs, one write in
// flight (a queue), the read loop always armed. The session owns the
// execute requests it started (by request id) and the tool calls it is
// waiting on (by the server's call id); the pool's threads reach it only
// through call_tool() and deliver(), which post onto the strand.
#pragma once

#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "server/bridge.hpp"
#include "server/rpc.hpp"
#include "server/state.hpp"

namespace corral::server {

namespace http = beast::http;
namespace websocket = beast::websocket;

class WebSocketSession : public Session,
                         public Caller,
                         public std::enable_shared_from_this<WebSocketSession> {
 public:
  WebSocketSession(std::shared_ptr<ServerState> state, Stream&& stream, std::string identity,
                   std::string remote_address);
  ~WebSocketSession() override;

  // Completes the upgrade `request` asked for (on the session's strand).
  void start(http::request<http::string_body> request);
  // The connection-cap slot (ServerState::admit_connection), held until the
  // session ends.
  void hold(std::shared_ptr<void> slot) { slot_ = std::move(slot); }

  // Session
  void heartbeat() override;
  void shut_down() override;
  void terminate() override;

  // Caller
  void call_tool(std::shared_ptr<Run> run, std::string name, std::string args_json,
                 pool::ToolAnswer answer) override;
  void deliver(std::shared_ptr<Run> run, pool::Outcome outcome) override;

 private:
  struct PendingCall {
    pool::ToolAnswer answer;
    std::string run_key;
  };

  void on_accept(beast::error_code ec);
  void do_read();
  void on_read(beast::error_code ec, std::size_t bytes);
  void handle_message(std::string_view text);
  void handle_request(const rpc::json::value& id, std::string_view method,
                      const rpc::json::value* params);
  void handle_response(const rpc::json::object& message);
  void start_execution(const rpc::json::value& id, const rpc::json::value* params);
  void finish(const std::shared_ptr<Run>& run, pool::Outcome outcome);

  void send(std::string text);
  void do_write();
  void on_write(beast::error_code ec, std::size_t bytes);
  // Closes with `code` once every queued message is written.
  void close_after_writes(websocket::close_code code, std::string reason);
  void do_close();
  void on_age_limit(beast::error_code ec);
  // The connection is over: reject waiting tool calls, leave the registry.
  void end();

  std::shared_ptr<ServerState> state_;
  websocket::stream<Stream> ws_;
  std::string identity_;
  std::string remote_address_;
  std::shared_ptr<void> slot_;
  beast::flat_buffer buffer_;
  std::deque<std::string> queue_;
  bool writing_ = false;
  std::optional<websocket::close_reason> pending_close_;
  bool closing_ = false;
  bool ended_ = false;
  bool counted_ = false;
  bool open_ = false;
  // Heartbeat: set by a pong, cleared by each ping.
  bool alive_ = true;
  bool pinging_ = false;
  asio::steady_timer age_timer_;
  std::map<std::string, std::shared_ptr<Run>> runs_;
  std::map<std::string, PendingCall> calls_;
  std::uint64_t next_call_ = 0;
};

}  // namespace corral::server
