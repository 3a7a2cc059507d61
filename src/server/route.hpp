// src/server/route.hpp: HttpRoute, a plain-HTTP path another layer serves
// on the executor's listener (the MCP transport at /mcp), and Routes::add,
// which mounts one. Internal to corral.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace corral::server {

class HttpConnection;  // http_route.hpp
class Server;          // corral/server.hpp

// HttpRoute: plain HTTP requests (not WebSocket upgrades) for `path` are
// handed to `handler`, connection and all, instead of the probes: the server
// stops tracking the connection (so close() neither waits for nor closes
// it; a route that streams ends its streams itself). The request body may
// be up to `body_limit` bytes. Runs on a server thread.
struct HttpRoute {
  std::string path;
  std::size_t body_limit = 64 * 1024;
  std::function<void(std::unique_ptr<HttpConnection>)> handler;
};

// Routes: the one way to mount a route (a friend of Server).
class Routes {
 public:
  // Before listen(); throws std::logic_error after it, or when `path` is
  // mounted already or is not absolute.
  static void add(Server& server, HttpRoute route);
};

}  // namespace corral::server
