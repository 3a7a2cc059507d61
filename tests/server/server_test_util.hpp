// tests/server/server_test_util.hpp: a real server on port 0 with real
// `corral worker` processes, and small Beast clients that speak raw HTTP
// and raw WebSocket to it (so the tests see exactly what goes on the wire).
#pragma once

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include "core/json.hpp"

#include "corral/client.hpp"
#include "corral/server.hpp"

namespace corral::server::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace json = core::json;
using tcp = asio::ip::tcp;

// Options for a server on 127.0.0.1:0 whose pool runs the built binary.
inline Options test_options() {
  Options options;
  options.host = "127.0.0.1";
  options.port = 0;
  options.pool.worker_command = {CORRAL_BINARY, "worker"};
  options.pool.max_workers = 2;
  options.pool.termination_delay = std::chrono::milliseconds(200);
  options.shutdown_drain = std::chrono::milliseconds(2000);
  return options;
}

// Bounds every blocking read of a test socket, so a broken server fails the
// test instead of hanging it.
inline void bound_reads(int fd, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  timeval tv{};
  tv.tv_sec = limit.count() / 1000;
  tv.tv_usec = (limit.count() % 1000) * 1000;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

struct HttpReply {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;
};

// One HTTP request on a fresh connection.
inline HttpReply http_request(std::uint16_t port, http::verb verb, std::string target,
                              std::map<std::string, std::string> headers = {}) {
  asio::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  bound_reads(socket.native_handle());
  http::request<http::string_body> request(verb, target, 11);
  request.set(http::field::host, "127.0.0.1");
  for (const auto& [name, value] : headers) request.set(name, value);
  request.prepare_payload();
  http::write(socket, request);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  if (verb == http::verb::head) parser.skip(true);
  http::read(socket, buffer, parser);
  HttpReply reply;
  reply.status = parser.get().result_int();
  reply.body = parser.get().body();
  for (const auto& field : parser.get()) {
    reply.headers[std::string(field.name_string())] = std::string(field.value());
  }
  return reply;
}

// A raw WebSocket upgrade; returns the status line's code (101 on success).
inline int raw_upgrade_status(std::uint16_t port, std::map<std::string, std::string> headers = {}) {
  HttpReply reply = http_request(port, http::verb::get, "/", [&] {
    headers["Connection"] = "Upgrade";
    headers["Upgrade"] = "websocket";
    headers["Sec-WebSocket-Version"] = "13";
    headers["Sec-WebSocket-Key"] = "dGhlIHNhbXBsZSBub25jZQ==";
    return headers;
  }());
  return reply.status;
}

// A synchronous JSON-RPC WebSocket client.
class RawSocket {
 public:
  explicit RawSocket(std::uint16_t port, std::map<std::string, std::string> headers = {})
      : ws_(ioc_) {
    ws_.next_layer().connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    bound_reads(ws_.next_layer().native_handle());
    ws_.set_option(websocket::stream_base::decorator([headers](websocket::request_type& request) {
      for (const auto& [name, value] : headers) request.insert(name, value);
    }));
    ws_.handshake("127.0.0.1", "/");
    ws_.control_callback([this](websocket::frame_type kind, beast::string_view) {
      if (kind == websocket::frame_type::ping) ++pings_;
    });
  }

  void send(const std::string& text) {
    ws_.text(true);
    ws_.write(asio::buffer(text));
  }
  void send(const json::value& message) { send(json::serialize(message)); }

  // The next message, parsed. Throws on a closed socket or after the read bound.
  json::value receive() { return json::parse(receive_text()); }
  // The next message as sent.
  std::string receive_text() {
    beast::flat_buffer buffer;
    ws_.read(buffer);
    return beast::buffers_to_string(buffer.data());
  }

  // Reads until the socket ends; returns the error that ended it.
  beast::error_code read_until_closed() {
    beast::error_code ec;
    while (!ec) {
      beast::flat_buffer buffer;
      ws_.read(buffer, ec);
    }
    return ec;
  }

  json::value call(std::int64_t id, std::string_view method, json::value params = nullptr) {
    json::object request{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
    if (!params.is_null()) request["params"] = std::move(params);
    send(request);
    return receive();
  }

  websocket::stream<tcp::socket>& ws() { return ws_; }
  const websocket::close_reason& reason() const { return ws_.reason(); }
  int pings() const { return pings_.load(); }

 private:
  asio::io_context ioc_;
  websocket::stream<tcp::socket> ws_;
  std::atomic<int> pings_{0};
};

inline json::object execute_params(std::string code, json::value timeout = json::value(),
                                   bool with_timeout = false) {
  json::object params{{"code", std::move(code)}};
  if (with_timeout) params["timeout"] = std::move(timeout);
  return params;
}

inline client::ExecuteRequest request_of(
    std::string code, client::Timeout timeout = client::Timeout::server_default()) {
  client::ExecuteRequest request;
  request.code = std::move(code);
  request.timeout = timeout;
  return request;
}

// The server's own health after an attack: probes answer and a trivial run
// succeeds on a new connection.
inline void expect_healthy(std::uint16_t port) {
  EXPECT_EQ(http_request(port, http::verb::get, "/healthz").status, 200);
  auto client = client::Client::connect("ws://127.0.0.1:" + std::to_string(port) + "/");
  const auto outcome = client->execute(request_of("async () => 6 * 7"));
  ASSERT_TRUE(outcome.ok()) << outcome.failure().message;
  EXPECT_EQ(outcome.execution().value(), "42");
}

// Collects log lines; wait_for blocks until one contains `needle`.
class LogSink {
 public:
  Logger logger() {
    return [this](LogLevel, const std::string& line) {
      std::lock_guard lock(mutex_);
      lines_.push_back(line);
      cv_.notify_all();
    };
  }
  bool wait_for(const std::string& needle,
                std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, limit, [&] {
      for (const auto& line : lines_) {
        if (line.find(needle) != std::string::npos) return true;
      }
      return false;
    });
  }
  std::vector<std::string> lines() {
    std::lock_guard lock(mutex_);
    return lines_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::string> lines_;
};

// Waits (bounded) for a condition that an event will make true.
template <class Predicate>
bool eventually(Predicate predicate, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (predicate()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return predicate();
}

}  // namespace corral::server::testing
