// src/mcp/http_connection.cc: HttpEndpoint::Connection (http_connection.hpp),
// the writing side of one taken-over connection: a response, or an SSE
// stream and its events, queued on the connection's strand; the close.
#include "mcp/http_connection.hpp"

#include <fmt/format.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>

namespace corral::mcp {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;

const char* reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 406:
      return "Not Acceptable";
    case 415:
      return "Unsupported Media Type";
    case 503:
      return "Service Unavailable";
  }
  return "Error";
}

// CORS: what a browser on an allowed origin may read (the headers it may send
// are in http.cc, with the preflight).
constexpr const char* kCorsExposed = "Mcp-Session-Id, WWW-Authenticate";

}  // namespace

void HttpEndpoint::Connection::respond(int status, std::string body, const std::string& type,
                                       const Headers& extra) {
  std::string head = fmt::format("HTTP/1.1 {} {}\r\nServer: corral\r\n", status, reason(status));
  if (!body.empty() || (status != 202 && status != 204)) head += "Content-Type: " + type + "\r\n";
  head += fmt::format("Content-Length: {}\r\nConnection: close\r\n", body.size());
  for (const auto& [k, v] : extra) head += k + ": " + v + "\r\n";
  head += cors();
  head += "\r\n";
  enqueue(head + body, true, std::chrono::seconds(30));
}

void HttpEndpoint::Connection::start_sse(const Headers& extra) {
  std::string head =
      "HTTP/1.1 200 OK\r\nServer: corral\r\nContent-Type: text/event-stream\r\n"
      "Cache-Control: no-cache\r\nConnection: close\r\n";
  for (const auto& [k, v] : extra) head += k + ": " + v + "\r\n";
  head += cors();
  head += "\r\n";
  enqueue(std::move(head), false, std::nullopt);
  asio::post(stream_.get_executor(), [self = shared_from_this()] { self->watch(); });
}

void HttpEndpoint::Connection::event(const std::string& message) {
  enqueue("event: message\ndata: " + message + "\n\n", false, std::nullopt);
}

void HttpEndpoint::Connection::end() { enqueue({}, true, std::chrono::seconds(30)); }

std::string HttpEndpoint::Connection::cors() const {
  if (origin_.empty()) return {};
  return "Access-Control-Allow-Origin: " + origin_ +
         "\r\nAccess-Control-Expose-Headers: " + kCorsExposed + "\r\nVary: Origin\r\n";
}

void HttpEndpoint::Connection::enqueue(std::string data, bool last,
                                       std::optional<std::chrono::seconds> deadline) {
  asio::post(stream_.get_executor(),
             [self = shared_from_this(), data = std::move(data), last, deadline]() mutable {
               if (self->ending_) return;
               if (!data.empty()) self->queue_.push_back(std::move(data));
               if (last) self->ending_ = true;
               // A watched (SSE) stream never expires: Beast allows no timer
               // change while a read and a write are both pending.
               if (!self->watching_) {
                 if (deadline) {
                   self->stream_.expires_after(*deadline);
                 } else {
                   self->stream_.expires_never();
                 }
               }
               if (!self->writing_) self->do_write();
             });
}

void HttpEndpoint::Connection::do_write() {
  if (queue_.empty()) {
    if (ending_) shutdown();
    return;
  }
  writing_ = true;
  asio::async_write(stream_, asio::buffer(queue_.front()),
                    [self = shared_from_this()](beast::error_code ec, std::size_t) {
                      self->writing_ = false;
                      self->queue_.pop_front();
                      if (ec) {
                        self->queue_.clear();
                        self->ending_ = true;
                        self->shutdown();
                        return;
                      }
                      self->do_write();
                    });
}

void HttpEndpoint::Connection::watch() {
  if (!watching_) stream_.expires_never();
  watching_ = true;
  stream_.async_read_some(asio::buffer(scratch_),
                          [self = shared_from_this()](beast::error_code ec, std::size_t) {
                            if (ec) {
                              self->gone_.store(true);
                              return;
                            }
                            self->watch();
                          });
}

void HttpEndpoint::Connection::shutdown() {
  gone_.store(true);
  beast::error_code ignored;
  stream_.socket().shutdown(server::Protocol::socket::shutdown_send, ignored);
  stream_.socket().close(ignored);
}

}  // namespace corral::mcp
