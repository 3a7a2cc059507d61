// src/mcp/http.hpp: the Streamable HTTP transport of MCP, mounted on the
// executor server as a route (server::Routes::add, path /mcp).
//
//   POST   one JSON-RPC message; a request is answered with JSON, or with an
//          SSE stream once it has notifications to send (progress, logs);
//          notifications and responses get 202. `initialize` opens a
//          session (Mcp-Session-Id); every other message names it.
//   GET    the session's server stream (SSE).
//   DELETE ends the session.
// Every request passes, in order: the server's request guard (Host and
// Origin against DNS rebinding, 400/403: src/server/request_guard.hpp), a
// CORS preflight answered for an allowed Origin (204), the bearer token when
// the server has one (401), then the session checks (400 without an id, 404
// for an unknown or expired one). Answers to an allowed Origin carry
// Access-Control-Allow-Origin.
// Sessions are bounded in number (503 past it) and end after an idle time.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "corral/mcp.hpp"
#include "corral/server.hpp"
#include "server/route.hpp"

namespace corral::mcp {

struct HttpOptions {
  std::size_t max_sessions = 100;
  std::chrono::milliseconds session_idle{900'000};
  std::size_t body_limit = std::size_t{16} << 20;
  // Unset: every caller is admitted. Otherwise a refusal answers 401.
  server::IdentityHook identify;
  Logger logger;
};

class HttpEndpoint : public std::enable_shared_from_this<HttpEndpoint> {
 public:
  HttpEndpoint(std::shared_ptr<Service> service, HttpOptions options);
  ~HttpEndpoint();

  // The route to mount with server::Routes::add (path /mcp). `locate` returns the
  // endpoint to serve, or null while there is none (503).
  static server::HttpRoute route(std::function<std::shared_ptr<HttpEndpoint>()> locate,
                                 std::size_t body_limit);
  // Answers one request taken over from the server.
  void handle(std::unique_ptr<server::HttpConnection> connection);
  // Ends every session (running calls are cancelled) and every open stream;
  // later requests get 503. Idempotent.
  void close();
  std::size_t sessions() const;

  class Connection;
  struct Entry;

 private:
  void serve(std::shared_ptr<Connection> connection);
  void post(const std::shared_ptr<Connection>& connection);
  // POST of `initialize`: opens a session when it succeeds (503 past the
  // session bound).
  void open_session(const std::shared_ptr<Connection>& connection,
                    const core::json::object& initialize);
  // POST of any other message, to the session it names.
  void post_to_session(const std::shared_ptr<Connection>& connection, bool is_request);
  void get(const std::shared_ptr<Connection>& connection);
  void remove(const std::shared_ptr<Connection>& connection);
  // The session the request names, or answers (400/404) and returns null.
  std::shared_ptr<Entry> find(const std::shared_ptr<Connection>& connection);
  void sweep(std::chrono::steady_clock::time_point now);

  std::shared_ptr<Service> service_;
  HttpOptions options_;
  mutable std::mutex mutex_;
  bool closed_ = false;
  std::map<std::string, std::shared_ptr<Entry>> sessions_;
};

}  // namespace corral::mcp
