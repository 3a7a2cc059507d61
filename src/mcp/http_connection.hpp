// src/mcp/http_connection.hpp: HttpEndpoint::Connection, one HTTP connection
// the MCP transport took over from the server (reading its request,
// responding, writing an SSE stream). Private to src/mcp (http.cc uses it).
#pragma once

#include <atomic>
#include <boost/beast/http.hpp>
#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mcp/http.hpp"
#include "server/http_route.hpp"

namespace corral::mcp {

using Headers = std::vector<std::pair<std::string, std::string>>;

// HttpEndpoint::Connection: one taken-over connection; writes queued on its
// strand, one in flight.
class HttpEndpoint::Connection : public std::enable_shared_from_this<Connection> {
 public:
  explicit Connection(std::unique_ptr<server::HttpConnection> c)
      : stream_(std::move(c->stream)),
        request_(std::move(c->request)),
        remote_(std::move(c->remote_address)),
        origin_(std::move(c->origin)),
        slot_(std::move(c->slot)) {}

  const boost::beast::http::request<boost::beast::http::string_body>& request() const {
    return request_;
  }
  const std::string& remote() const { return remote_; }
  std::string header(std::string_view name) const {
    auto it = request_.find(boost::beast::string_view(name.data(), name.size()));
    return it == request_.end() ? std::string() : std::string(it->value());
  }

  void respond(int status, std::string body, const std::string& type = "application/json",
               const Headers& extra = {});
  void start_sse(const Headers& extra = {});
  void event(const std::string& message);
  // Closes once everything queued was written.
  void end();

  bool open() const { return !gone_.load(); }
  // The allowed Origin the request carried, or empty.
  const std::string& origin() const { return origin_; }

 private:
  // Every answer to an allowed browser origin lets that page read it.
  std::string cors() const;
  void enqueue(std::string data, bool last, std::optional<std::chrono::seconds> deadline);
  void do_write();
  // Learns that the client went away from an SSE stream (reads nothing else).
  void watch();
  void shutdown();

  server::Stream stream_;
  boost::beast::http::request<boost::beast::http::string_body> request_;
  std::string remote_;
  std::string origin_;
  // The server's connection-cap slot: this connection (a GET stream may
  // live as long as its session) counts against max_connections until it
  // is gone.
  std::shared_ptr<void> slot_;
  std::deque<std::string> queue_;
  bool writing_ = false;
  bool ending_ = false;
  bool watching_ = false;  // a read is pending for as long as the stream lives
  std::atomic<bool> gone_{false};
  char scratch_[512];
};

}  // namespace corral::mcp
