// The executor protocol's C++ client (include/corral/client.hpp).
#include "corral/client.hpp"

#include <fmt/format.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/url/parse.hpp>
#include <condition_variable>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include "core/envelope.hpp"
#include "core/jsonrpc.hpp"

namespace corral::client {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace http = beast::http;
namespace json = core::json;  // Boost.JSON with corral's writer
namespace jsonrpc = core::jsonrpc;
using Protocol = asio::generic::stream_protocol;
using Stream = beast::basic_stream<Protocol, asio::any_io_executor>;

const char* protocol_version() noexcept { return kExecutorProtocolVersion; }

namespace {

struct Target {
  std::string host;  // empty for a unix socket
  std::string port;
  std::string socket_path;
  std::string path = "/";
};

Target parse_url(const std::string& url) {
  Target target;
  constexpr std::string_view kUnix = "ws+unix://";
  if (url.rfind(kUnix, 0) == 0) {
    target.socket_path = url.substr(kUnix.size());
    if (target.socket_path.empty()) {
      throw Error(FailureCode::invalid_request, "the URL " + url + " names no socket path");
    }
    return target;
  }
  auto parsed = boost::urls::parse_uri(url);
  if (!parsed || parsed->scheme() != "ws" || parsed->host().empty() || !parsed->has_port()) {
    throw Error(FailureCode::invalid_request,
                "the URL " + url + " is not ws://HOST:PORT (wss:// is not supported)");
  }
  target.host = std::string(parsed->encoded_host());
  if (target.host.size() > 2 && target.host.front() == '[') {
    target.host = target.host.substr(1, target.host.size() - 2);
  }
  target.port = std::string(parsed->port());
  if (!parsed->encoded_path().empty()) target.path = std::string(parsed->encoded_path());
  return target;
}

}  // namespace

class Client::Impl : public std::enable_shared_from_this<Client::Impl> {
 public:
  using Reply = std::function<void(json::value message)>;

  Impl(std::string url, ConnectOptions options)
      : url_(std::move(url)),
        options_(std::move(options)),
        ws_(asio::make_strand(ioc_)),
        tools_(options_.tool_threads == 0 ? 1 : options_.tool_threads) {}

  ~Impl() {
    guard_.reset();
    if (thread_.joinable()) {
      if (thread_.get_id() == std::this_thread::get_id()) {
        thread_.detach();
      } else {
        thread_.join();
      }
    }
  }

  void connect() {
    const Target target = parse_url(url_);
    guard_.emplace(ioc_.get_executor());
    thread_ = std::thread([this] { ioc_.run(); });
    auto opened = std::make_shared<std::promise<void>>();
    auto future = opened->get_future();
    asio::post(ws_.get_executor(),
               [self = shared_from_this(), target, opened] { self->open(target, opened); });
    if (future.wait_for(options_.connect_timeout) != std::future_status::ready) {
      shutdown_now();
      throw Error(FailureCode::connection_broken,
                  fmt::format("Executor handshake timed out for {}", url_));
    }
    try {
      future.get();
    } catch (...) {
      shutdown_now();
      throw;
    }
    json::value reply;
    const bool answered = call("protocolVersion", nullptr, reply, options_.connect_timeout);
    if (!answered) {
      shutdown_now();
      throw Error(FailureCode::connection_broken,
                  fmt::format("Executor handshake failed for {}: no protocolVersion answer", url_));
    }
    const json::value* result = reply.as_object().if_contains("result");
    if (!result || !result->is_string() || result->get_string() != kExecutorProtocolVersion) {
      shutdown_now();
      throw Error(FailureCode::protocol_mismatch,
                  fmt::format("The server at {} speaks protocol {}; this client speaks {}", url_,
                              result ? json::serialize(*result) : std::string("(none)"),
                              kExecutorProtocolVersion));
    }
  }

  Outcome execute(const ExecuteRequest& request, ToolHandler handler) {
    json::object params;
    params["code"] = request.code;
    json::array tools;
    for (const ToolSpec& tool : request.tools) {
      json::object descriptor{{"name", tool.name}};
      if (!tool.description.empty()) descriptor["description"] = tool.description;
      if (!tool.input_schema.empty()) {
        boost::system::error_code ec;
        json::value schema = json::parse(tool.input_schema, ec);
        if (ec) {
          return Outcome(Failure{FailureCode::invalid_request,
                                 "the input schema of tool " + tool.name + " is not JSON",
                                 nullptr});
        }
        descriptor["inputSchema"] = std::move(schema);
      }
      tools.push_back(std::move(descriptor));
    }
    params["tools"] = std::move(tools);
    switch (request.timeout.kind) {
      case Timeout::Kind::server_default:
        break;
      case Timeout::Kind::widest:
        params["timeout"] = nullptr;
        break;
      case Timeout::Kind::millis:
        params["timeout"] = request.timeout.millis.count();
        break;
    }
    if (request.language != Language::javascript) {
      params["language"] = std::string(to_string(request.language));
    }
    json::value reply;
    if (!call("execute", std::move(params), reply, std::nullopt, std::move(handler))) {
      return Outcome(Failure{FailureCode::connection_broken, broken_message(), nullptr});
    }
    const json::object& object = reply.as_object();
    if (const json::value* result = object.if_contains("result")) {
      try {
        return core::outcome_from_envelope(*result);
      } catch (const std::invalid_argument& e) {
        return Outcome(Failure{FailureCode::protocol_mismatch, e.what(), nullptr});
      }
    }
    return Outcome(error_failure(object));
  }

  void close() {
    {
      std::lock_guard lock(mutex_);
      if (closed_requested_) return;
      closed_requested_ = true;
    }
    if (thread_.joinable()) {
      asio::post(ws_.get_executor(), [self = shared_from_this()] {
        if (self->ended_ || !self->open_) {
          self->terminate();
          return;
        }
        self->pending_close_ = true;
        if (!self->writing_) self->do_close();
      });
      std::unique_lock lock(mutex_);
      ended_cv_.wait_for(lock, std::chrono::seconds(5), [this] { return ended_flag_; });
    }
    shutdown_now();
  }

  bool connected() const {
    std::lock_guard lock(mutex_);
    return open_flag_ && !ended_flag_;
  }
  int close_code() const {
    std::lock_guard lock(mutex_);
    return close_code_;
  }
  std::string close_reason() const {
    std::lock_guard lock(mutex_);
    return close_reason_;
  }

 private:
  std::string broken_message() const {
    std::lock_guard lock(mutex_);
    if (close_code_ != 0) {
      return fmt::format("The connection to {} closed ({} {}) before the answer", url_, close_code_,
                         close_reason_);
    }
    return fmt::format("The connection to {} broke before the answer", url_);
  }

  static Failure error_failure(const json::object& object) {
    const json::value* error = object.if_contains("error");
    const json::object* e = error ? error->if_object() : nullptr;
    std::string message = "the server answered with an error";
    FailureCode code = FailureCode::internal;
    if (e) {
      if (const json::value* m = e->if_contains("message"); m && m->is_string()) {
        message = std::string(m->get_string());
      }
      if (const json::value* data = e->if_contains("data"); data && data->is_object()) {
        if (const json::value* c = data->as_object().if_contains("code"); c && c->is_string()) {
          code = failure_code_from_string(c->get_string()).value_or(FailureCode::internal);
        }
      }
    }
    return Failure{code, message, nullptr};
  }

  // Sends one request and waits for its answer; false when the connection
  // ended first (or `timeout` passed).
  bool call(std::string_view method, json::value params, json::value& reply,
            std::optional<std::chrono::milliseconds> timeout, ToolHandler handler = {}) {
    struct Wait {
      std::mutex m;
      std::condition_variable cv;
      bool done = false;
      bool ok = false;
      json::value message;
    };
    auto wait = std::make_shared<Wait>();
    std::int64_t id = 0;
    {
      std::lock_guard lock(mutex_);
      if (ended_flag_) return false;
      id = ++next_id_;
      pending_[id] = Pending{[wait](bool ok, json::value message) {
                               std::lock_guard lock(wait->m);
                               wait->done = true;
                               wait->ok = ok;
                               wait->message = std::move(message);
                               wait->cv.notify_all();
                             },
                             std::move(handler)};
    }
    send(jsonrpc::request_message(id, method, std::move(params)));
    std::unique_lock lock(wait->m);
    if (timeout) {
      if (!wait->cv.wait_for(lock, *timeout, [&] { return wait->done; })) return false;
    } else {
      wait->cv.wait(lock, [&] { return wait->done; });
    }
    if (!wait->ok) return false;
    reply = std::move(wait->message);
    return true;
  }

  void open(const Target& target, std::shared_ptr<std::promise<void>> opened) {
    auto fail = [opened](FailureCode code, std::string message) {
      opened->set_exception(std::make_exception_ptr(Error(code, message)));
    };
    boost::system::error_code ec;
    auto& socket = beast::get_lowest_layer(ws_).socket();
    std::string host_header;
    if (!target.socket_path.empty()) {
      asio::local::stream_protocol::endpoint endpoint(target.socket_path);
      socket.open(Protocol::endpoint(endpoint).protocol(), ec);
      if (!ec) socket.connect(endpoint, ec);
      host_header = "localhost";
    } else {
      asio::ip::tcp::resolver resolver(ioc_);
      auto results = resolver.resolve(target.host, target.port, ec);
      if (!ec) {
        ec = asio::error::host_not_found;
        for (const auto& entry : results) {
          boost::system::error_code attempt;
          Protocol::endpoint endpoint(entry.endpoint());
          socket.close(attempt);
          socket.open(endpoint.protocol(), attempt);
          if (!attempt) socket.connect(endpoint, attempt);
          ec = attempt;
          if (!attempt) break;
        }
      }
      if (!ec) socket.set_option(asio::ip::tcp::no_delay(true), ec);
      // An IPv6 literal keeps its brackets in Host (RFC 3986 authority).
      const bool v6 = target.host.find(':') != std::string::npos;
      host_header = (v6 ? "[" + target.host + "]" : target.host) + ":" + target.port;
    }
    if (ec) {
      fail(FailureCode::unavailable, fmt::format("Cannot reach {}: {}", url_, ec.message()));
      return;
    }
    websocket::stream_base::timeout timeouts{};
    timeouts.handshake_timeout = options_.connect_timeout;
    timeouts.idle_timeout = websocket::stream_base::none();
    timeouts.keep_alive_pings = false;
    ws_.set_option(timeouts);
    ws_.read_message_max(0);
    ws_.set_option(websocket::stream_base::decorator(
        [authorization = options_.authorization](websocket::request_type& request) {
          request.set(http::field::user_agent, "corral-client");
          if (!authorization.empty()) request.set(http::field::authorization, authorization);
        }));
    auto response = std::make_shared<websocket::response_type>();
    ws_.async_handshake(
        *response, host_header, target.path,
        [self = shared_from_this(), response, opened, fail](beast::error_code ec) {
          if (ec) {
            if (response->result_int() != 0 &&
                response->result() != http::status::switching_protocols) {
              fail(FailureCode::connection_rejected,
                   fmt::format("Executor handshake failed for {}: HTTP {} {}", self->url_,
                               response->result_int(), std::string(response->reason())));
            } else {
              fail(FailureCode::connection_rejected,
                   fmt::format("Executor handshake failed for {}: {}", self->url_, ec.message()));
            }
            return;
          }
          self->open_ = true;
          {
            std::lock_guard lock(self->mutex_);
            self->open_flag_ = true;
          }
          self->do_read();
          opened->set_value();
        });
  }

  void do_read() {
    ws_.async_read(buffer_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) {
        self->end();
        return;
      }
      std::string text = beast::buffers_to_string(self->buffer_.data());
      self->buffer_.consume(self->buffer_.size());
      self->handle(text);
      self->do_read();
    });
  }

  void handle(std::string_view text) {
    boost::system::error_code ec;
    json::value message = json::parse(json::string_view(text.data(), text.size()), ec);
    if (ec || !message.is_object()) return;
    json::object& object = message.as_object();
    if (const json::value* method = object.if_contains("method")) {
      if (method->is_string() && method->get_string() == "tool.call") tool_call(object);
      return;
    }
    const json::value* id = object.if_contains("id");
    if (!id || !id->is_int64()) return;
    std::function<void(bool, json::value)> reply;
    {
      std::lock_guard lock(mutex_);
      auto found = pending_.find(id->get_int64());
      if (found == pending_.end()) return;
      reply = std::move(found->second.reply);
      pending_.erase(found);
    }
    reply(true, std::move(message));
  }

  void tool_call(const json::object& request) {
    const json::value id = request.contains("id") ? request.at("id") : json::value(nullptr);
    const json::object* params =
        request.contains("params") ? request.at("params").if_object() : nullptr;
    ToolHandler handler;
    std::string name;
    std::string input = "null";
    if (params) {
      const json::value* execution = params->if_contains("execution");
      if (execution && execution->is_int64()) {
        std::lock_guard lock(mutex_);
        if (auto found = pending_.find(execution->get_int64()); found != pending_.end()) {
          handler = found->second.handler;
        }
      }
      if (const json::value* n = params->if_contains("name"); n && n->is_string()) {
        name = std::string(n->get_string());
      }
      if (const json::value* in = params->if_contains("input")) input = json::serialize(*in);
    }
    if (!handler) {
      send(jsonrpc::error_message(id, jsonrpc::kInvalidParams,
                                  "This client has no tool handler for that execution.",
                                  FailureCode::no_such_tool));
      return;
    }
    asio::post(tools_, [self = shared_from_this(), id, handler = std::move(handler),
                        name = std::move(name), input = std::move(input)] {
      std::string answer;
      try {
        std::string result = handler(name, input);
        boost::system::error_code ec;
        json::value value = json::parse(result, ec);
        if (ec) {
          answer = jsonrpc::error_message(id, jsonrpc::kInternalError,
                                          "The tool answered with text that is not JSON.",
                                          FailureCode::tool_error);
        } else {
          answer = jsonrpc::result_message(id, std::move(value));
        }
      } catch (const std::exception& e) {
        answer =
            jsonrpc::error_message(id, jsonrpc::kInternalError, e.what(), FailureCode::tool_error);
      }
      self->send(std::move(answer));
    });
  }

  void send(std::string text) {
    asio::post(ws_.get_executor(), [self = shared_from_this(), text = std::move(text)]() mutable {
      if (self->ended_ || self->pending_close_) return;
      self->queue_.push_back(std::move(text));
      if (!self->writing_) self->do_write();
    });
  }

  void do_write() {
    writing_ = true;
    ws_.text(true);
    ws_.async_write(asio::buffer(queue_.front()),
                    [self = shared_from_this()](beast::error_code ec, std::size_t) {
                      self->writing_ = false;
                      if (ec) {
                        self->terminate();
                        return;
                      }
                      self->queue_.pop_front();
                      if (!self->queue_.empty()) {
                        self->do_write();
                      } else if (self->pending_close_) {
                        self->do_close();
                      }
                    });
  }

  void do_close() {
    ws_.async_close(websocket::close_code::normal,
                    [self = shared_from_this()](beast::error_code ec) {
                      if (ec) self->terminate();
                    });
  }

  void terminate() {
    boost::system::error_code ignored;
    beast::get_lowest_layer(ws_).socket().close(ignored);
    if (!open_) end();
  }

  void end() {
    if (ended_) return;
    ended_ = true;
    std::map<std::int64_t, Pending> pending;
    {
      std::lock_guard lock(mutex_);
      ended_flag_ = true;
      const websocket::close_reason& reason = ws_.reason();
      close_code_ = reason.code;
      close_reason_ = std::string(reason.reason.data(), reason.reason.size());
      pending.swap(pending_);
    }
    ended_cv_.notify_all();
    for (auto& [id, entry] : pending) entry.reply(false, nullptr);
  }

  // Cuts the socket, waits for running tool handlers, then for the io thread.
  void shutdown_now() {
    asio::post(ws_.get_executor(), [self = shared_from_this()] { self->terminate(); });
    tools_.join();
    guard_.reset();
    // Beast keeps a handshake timer armed after a refused upgrade; the loop
    // stops once every handler queued before this one has run.
    asio::post(ws_.get_executor(), [this] { ioc_.stop(); });
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
  }

  struct Pending {
    std::function<void(bool, json::value)> reply;
    ToolHandler handler;
  };

  std::string url_;
  ConnectOptions options_;
  asio::io_context ioc_;
  websocket::stream<Stream> ws_;
  asio::thread_pool tools_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> guard_;
  std::thread thread_;
  beast::flat_buffer buffer_;
  std::deque<std::string> queue_;
  // Strand-only state.
  bool writing_ = false;
  bool pending_close_ = false;
  bool open_ = false;
  bool ended_ = false;

  mutable std::mutex mutex_;
  std::condition_variable ended_cv_;
  bool open_flag_ = false;
  bool ended_flag_ = false;
  bool closed_requested_ = false;
  int close_code_ = 0;
  std::string close_reason_;
  std::int64_t next_id_ = 0;
  std::map<std::int64_t, Pending> pending_;
};

std::unique_ptr<Client> Client::connect(const std::string& url, ConnectOptions options) {
  auto impl = std::make_shared<Impl>(url, std::move(options));
  impl->connect();
  return std::unique_ptr<Client>(new Client(std::move(impl)));
}

Client::Client(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::~Client() { close(); }

Outcome Client::execute(const ExecuteRequest& request, ToolHandler handler) {
  return impl_->execute(request, std::move(handler));
}
void Client::close() { impl_->close(); }
bool Client::connected() const noexcept { return impl_->connected(); }
int Client::close_code() const noexcept { return impl_->close_code(); }
std::string Client::close_reason() const { return impl_->close_reason(); }

}  // namespace corral::client
