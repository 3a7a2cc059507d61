// src/mcp/upstream_http.cc: HttpUpstream, an upstream server reached at a
// Streamable HTTP URL: one POST per message, answered in JSON or SSE.
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/url/parse.hpp>
#include <map>
#include <mutex>
#include <sstream>

#include "core/jsonrpc.hpp"
#include "mcp/service.hpp"
#include "mcp/upstream_internal.hpp"

namespace corral::mcp::upstream_detail {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace jsonrpc = core::jsonrpc;
namespace http = beast::http;

// HttpUpstream: a Streamable HTTP endpoint; one connection per message.
class HttpUpstream : public UpstreamClient {
 public:
  HttpUpstream(const Upstream& upstream) : headers_(upstream.headers) {
    name_ = upstream.name;
    auto url = boost::urls::parse_uri(upstream.url);
    if (!url || url->scheme() != "http")
      throw std::runtime_error("the url must be http://host[:port]/path");
    host_ = std::string(url->host());
    port_ = url->has_port() ? std::string(url->port()) : "80";
    target_ = url->encoded_target().empty() ? "/" : std::string(url->encoded_target());
  }

  ~HttpUpstream() override { close(); }

  // Sends one message (core/jsonrpc.hpp's text) and returns the response
  // whose id is `id` (null for a notification, which has none). Throws
  // std::runtime_error.
  json::value post(std::string message, const json::value& id, std::chrono::milliseconds timeout) {
    asio::io_context ioc;
    beast::tcp_stream stream(ioc);
    stream.expires_after(timeout);
    asio::ip::tcp::resolver resolver(ioc);
    stream.connect(resolver.resolve(host_, port_));
    http::request<http::string_body> req{http::verb::post, target_, 11};
    req.set(http::field::host, host_ + ":" + port_);
    req.set(http::field::content_type, "application/json");
    req.set(http::field::accept, "application/json, text/event-stream");
    {
      std::lock_guard lock(mutex_);
      if (!session_.empty()) req.set("Mcp-Session-Id", session_);
      if (initialized_) req.set("MCP-Protocol-Version", revision_);
    }
    for (const auto& [k, v] : headers_) req.set(k, v);
    req.body() = std::move(message);
    req.prepare_payload();
    http::write(stream, req);
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(std::uint64_t{64} << 20);
    http::read(stream, buffer, parser);
    auto& res = parser.get();
    if (auto it = res.find("mcp-session-id"); it != res.end()) {
      std::lock_guard lock(mutex_);
      session_ = std::string(it->value());
    }
    beast::error_code ignored;
    stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    const unsigned status = res.result_int();
    if (status == 202) return nullptr;
    if (status >= 300)
      throw std::runtime_error("HTTP " + std::to_string(status) + " from " + host_ + ":" + port_ +
                               target_);
    const std::string type(res[http::field::content_type]);
    if (type.rfind("text/event-stream", 0) == 0) {
      std::istringstream in(res.body());
      std::string line, data;
      auto take = [&]() -> std::optional<json::value> {
        boost::system::error_code ec;
        bool replaced = false;
        json::value v = parse_upstream(std::move(data), ec, replaced);
        data.clear();
        if (!ec && v.is_object() && !id.is_null() && v.get_object().if_contains("id") &&
            v.get_object().at("id") == id && !v.get_object().contains("method"))
          return v;
        return std::nullopt;
      };
      while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) {
          if (!data.empty())
            if (auto v = take()) return *v;
        } else if (line.rfind("data:", 0) == 0) {
          std::string part = line.substr(5);
          if (!part.empty() && part[0] == ' ') part.erase(0, 1);
          data += (data.empty() ? "" : "\n") + part;
        }
      }
      if (!data.empty())
        if (auto v = take()) return *v;
      throw std::runtime_error("the event stream ended without a response");
    }
    boost::system::error_code ec;
    bool replaced = false;
    json::value v = parse_upstream(std::move(res.body()), ec, replaced);
    if (ec)
      throw std::runtime_error("the upstream answered JSON that does not parse: " + ec.message());
    return v;
  }

  json::object request_sync(const std::string& method, json::object params,
                            std::chrono::milliseconds timeout, std::int64_t id = 0) {
    if (id == 0) id = next_id_.fetch_add(1) + 1;
    const json::value id_value(id);
    json::value answer =
        post(jsonrpc::request_message(id_value, method, std::move(params)), id_value, timeout);
    if (!answer.is_object()) throw std::runtime_error(method + ": no response");
    if (answer.get_object().contains("error"))
      throw std::runtime_error(method + ": " + error_text(answer.get_object()));
    const json::value* r = answer.get_object().if_contains("result");
    return r && r->is_object() ? r->get_object() : json::object{};
  }

  void connect(std::chrono::milliseconds timeout) {
    json::object init = request_sync("initialize", initialize_params(), timeout);
    {
      std::lock_guard lock(mutex_);
      if (const json::value* v = init.if_contains("protocolVersion"); v && v->is_string())
        revision_ = std::string(v->get_string());
      initialized_ = true;
    }
    post(jsonrpc::notification_message("notifications/initialized", nullptr), nullptr, timeout);
  }

  std::function<void()> call_tool(const std::string& tool, json::value arguments,
                                  std::chrono::milliseconds timeout, Done done) override {
    const std::int64_t id = next_id_.fetch_add(1) + 1;
    tasks_.spawn([this, tool, arguments = std::move(arguments), timeout, done, id] {
      // `done` once, outside the try: a throw from it must not answer twice.
      std::optional<json::object> result;
      std::string error;
      try {
        result = request_sync("tools/call", json::object{{"name", tool}, {"arguments", arguments}},
                              timeout, id);
      } catch (const std::exception& e) {
        error = "upstream " + name_ + ": " + e.what();
      } catch (...) {
        error = "upstream " + name_ + ": internal error";
      }
      done(std::move(result), std::move(error));
    });
    return [this, id] {
      tasks_.spawn([this, id] {
        try {
          post(jsonrpc::notification_message(
                   "notifications/cancelled",
                   json::object{{"requestId", id}, {"reason", "cancelled"}}),
               nullptr, std::chrono::seconds(5));
        } catch (const std::exception&) {
        }
      });
    };
  }

  void close() override {
    tasks_.wait_idle();
    std::string session;
    {
      std::lock_guard lock(mutex_);
      session.swap(session_);
    }
    if (session.empty()) return;
    try {  // end the session; a server that does not care answers 405
      asio::io_context ioc;
      beast::tcp_stream stream(ioc);
      stream.expires_after(std::chrono::seconds(2));
      asio::ip::tcp::resolver resolver(ioc);
      stream.connect(resolver.resolve(host_, port_));
      http::request<http::empty_body> req{http::verb::delete_, target_, 11};
      req.set(http::field::host, host_ + ":" + port_);
      req.set("Mcp-Session-Id", session);
      for (const auto& [k, v] : headers_) req.set(k, v);
      http::write(stream, req);
      beast::flat_buffer buffer;
      http::response<http::string_body> res;
      http::read(stream, buffer, res);
    } catch (const std::exception&) {
    }
  }

  void list_tools(std::chrono::milliseconds timeout) {
    std::string cursor;
    do {
      json::object params;
      if (!cursor.empty()) params["cursor"] = cursor;
      cursor = read_tools_page(request_sync("tools/list", std::move(params), timeout), tools_);
    } while (!cursor.empty());
  }

 private:
  std::map<std::string, std::string> headers_;
  std::string host_, port_, target_;
  std::mutex mutex_;
  std::string session_;
  std::string revision_ = kClientRevision;
  bool initialized_ = false;
  std::atomic<std::int64_t> next_id_{0};
  Tasks tasks_;
};

}  // namespace

std::unique_ptr<UpstreamClient> connect_http(const Upstream& upstream,
                                             std::chrono::milliseconds timeout) {
  auto client = std::make_unique<HttpUpstream>(upstream);
  client->connect(timeout);
  client->list_tools(timeout);
  return client;
}

}  // namespace corral::mcp::upstream_detail
