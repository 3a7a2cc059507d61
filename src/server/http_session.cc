#include "server/http_session.hpp"

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <boost/beast/websocket.hpp>
#include <boost/json.hpp>

#include "core/text.hpp"
#include "server/http_route.hpp"
#include "server/websocket_session.hpp"

namespace corral::server {

namespace {

// Probes and upgrades carry no body worth reading; anything larger is refused.
constexpr std::uint64_t kBodyLimit = 64 * 1024;

// Owns one identity decision: the first call wins; dropping every copy of
// the callback without a call refuses the caller.
struct PendingDecision {
  std::function<void(Decision)> apply;
  std::atomic<bool> decided{false};

  void decide(Decision decision) {
    if (decided.exchange(true)) return;
    apply(std::move(decision));
  }
  ~PendingDecision() {
    if (!decided.exchange(true)) apply(Decision::refuse("the identity hook never decided"));
  }
};

bool is_base64_digit(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '/';
}

}  // namespace

bool is_websocket_key(std::string_view key) {
  // 16 bytes are 128 bits: 21 digits of 6 bits, a 22nd carrying the last 2
  // bits (its 4 low bits zero, as RFC 4648 3.5 has encoders write them), "==".
  if (key.size() != 24 || key[22] != '=' || key[23] != '=') return false;
  for (std::size_t i = 0; i < 22; ++i) {
    if (!is_base64_digit(key[i])) return false;
  }
  const char last = key[21];
  return last == 'A' || last == 'Q' || last == 'g' || last == 'w';
}

// How many cap refusals may wait (up to 1 s each) for their peer to close.
constexpr std::size_t kMaxLingeringRefusals = 32;

void refuse_connection(const std::shared_ptr<ServerState>& state, Protocol::socket&& socket,
                       const std::string& reason) {
  struct Refusal {
    Stream stream;
    http::response<http::string_body> response;
    std::array<char, 4096> sink{};
    // Null when too many refusals already linger: this one closes once its
    // answer is written.
    std::shared_ptr<ServerState> lingering;
    explicit Refusal(Protocol::socket&& socket) : stream(std::move(socket)) {}
    ~Refusal() {
      if (lingering) lingering->lingering_refusals.fetch_sub(1);
    }
    // Takes what the peer already sent (a close with unread data would reset
    // the connection and could discard the 503 before it is read) and closes.
    void close_now() {
      beast::error_code ignored;
      auto& socket = stream.socket();
      socket.non_blocking(true, ignored);
      while (socket.read_some(asio::buffer(sink), ignored) > 0) {
      }
      socket.close(ignored);
    }
    // Reads (and drops) what the peer sent until it closes or the deadline
    // passes, so closing does not reset the connection before the 503 is read.
    static void drain(std::shared_ptr<Refusal> self) {
      // Both taken before the handler's capture moves `self` (the order in
      // which a call's arguments are evaluated is unspecified).
      auto& stream = self->stream;
      auto buffer = asio::buffer(self->sink);
      stream.async_read_some(buffer, [self = std::move(self)](beast::error_code ec, std::size_t) {
        if (!ec) {
          drain(self);
          return;
        }
        beast::error_code ignored;
        self->stream.socket().close(ignored);
      });
    }
  };
  state->metrics.connection_rejected();
  auto refusal = std::make_shared<Refusal>(std::move(socket));
  if (state->lingering_refusals.fetch_add(1) < kMaxLingeringRefusals) {
    refusal->lingering = state;
  } else {
    state->lingering_refusals.fetch_sub(1);
  }
  auto& response = refusal->response;
  response.version(11);
  response.result(http::status::service_unavailable);
  response.set(http::field::server, "corral");
  response.set(http::field::content_type, "application/json");
  response.set(http::field::retry_after, "1");
  response.keep_alive(false);
  response.body() = boost::json::serialize(
      boost::json::object{{"error", "Service Unavailable: " + reason + "; retry later."}});
  response.prepare_payload();
  refusal->stream.expires_after(std::chrono::seconds(1));
  http::async_write(refusal->stream, refusal->response,
                    [refusal](beast::error_code ec, std::size_t) {
                      beast::error_code ignored;
                      if (ec) {
                        refusal->stream.socket().close(ignored);
                        return;
                      }
                      refusal->stream.socket().shutdown(Protocol::socket::shutdown_send, ignored);
                      if (refusal->lingering) {
                        Refusal::drain(refusal);
                      } else {
                        refusal->close_now();
                      }
                    });
}

HttpSession::HttpSession(std::shared_ptr<ServerState> state, Protocol::socket&& socket,
                         std::string remote_address, std::shared_ptr<void> slot)
    : state_(std::move(state)),
      stream_(std::move(socket)),
      remote_address_(std::move(remote_address)),
      slot_(std::move(slot)) {}

HttpSession::~HttpSession() {
  if (!ended_) state_->remove(this);
}

void HttpSession::run() {
  state_->add(this, weak_from_this(), stream_.get_executor());
  asio::dispatch(stream_.get_executor(),
                 beast::bind_front_handler(&HttpSession::do_wait, shared_from_this()));
}

void HttpSession::do_wait() {
  if (first_ || buffer_.size() > 0) {
    do_read();
    return;
  }
  // Keep-alive: wait for the first byte of the next request.
  stream_.expires_after(state_->options.keep_alive_timeout);
  stream_.async_read_some(buffer_.prepare(4096),
                          beast::bind_front_handler(&HttpSession::on_wait, shared_from_this()));
}

void HttpSession::on_wait(beast::error_code ec, std::size_t bytes) {
  if (ec) {
    end();
    return;
  }
  buffer_.commit(bytes);
  do_read();
}

void HttpSession::do_read() {
  parser_.emplace();
  std::uint64_t limit = kBodyLimit;
  for (const HttpRoute& route : state_->routes)
    limit = std::max<std::uint64_t>(limit, route.body_limit);
  parser_->body_limit(limit);
  // The head within headers_timeout (from the connection's accept, or from
  // the first byte of a later request), however slowly it drips in.
  stream_.expires_after(state_->options.headers_timeout);
  http::async_read_header(stream_, buffer_, *parser_,
                          beast::bind_front_handler(&HttpSession::on_header, shared_from_this()));
}

void HttpSession::on_header(beast::error_code ec, std::size_t bytes) {
  if (ec || parser_->is_done()) {
    on_read(ec, bytes);
    return;
  }
  // Then the body within idle_timeout.
  stream_.expires_after(state_->options.idle_timeout);
  http::async_read(stream_, buffer_, *parser_,
                   beast::bind_front_handler(&HttpSession::on_read, shared_from_this()));
}

void HttpSession::on_read(beast::error_code ec, std::size_t) {
  if (ec == http::error::body_limit) {
    request_ = {};
    respond(http::status::payload_too_large, "payload too large");
    return;
  }
  if (ec) {
    end();
    return;
  }
  first_ = false;
  request_ = parser_->release();
  handle_request();
}

void HttpSession::handle_request() {
  const std::string_view target = request_.target();
  const std::string_view path = target.substr(0, target.find('?'));
  // Host and Origin first, for every request (src/server/request_guard.hpp).
  GuardVerdict verdict = state_->guard->check(request_);
  if (!verdict.allowed()) {
    state_->log(LogLevel::warn,
                fmt::format("refused a request from {}: {}", remote_address_, verdict.reason));
    if (beast::websocket::is_upgrade(request_)) state_->metrics.connection_rejected();
    respond(static_cast<http::status>(verdict.status), verdict.body(), "application/json");
    return;
  }
  if (beast::websocket::is_upgrade(request_)) {
    if (path != "/") {
      respond(http::status::not_found, "not found");
    } else if (check_handshake()) {
      handle_upgrade();
    }
    return;
  }
  for (const HttpRoute& route : state_->routes) {
    if (path != route.path || !route.handler) continue;
    if (request_.body().size() > route.body_limit) {
      respond(http::status::payload_too_large, "payload too large");
      return;
    }
    upgraded_ = true;  // the connection is the route's now
    auto connection = std::make_unique<HttpConnection>(std::move(stream_), std::move(buffer_),
                                                       std::move(request_), remote_address_);
    connection->origin = std::move(verdict.origin);
    connection->slot = std::move(slot_);
    route.handler(std::move(connection));
    end();
    return;
  }
  const auto verb = request_.method();
  if (verb != http::verb::get && verb != http::verb::head) {
    respond(http::status::not_found, "not found");
  } else if (path == "/healthz") {
    respond(http::status::ok, "ok");
  } else if (path == "/readyz") {
    if (state_->accepting.load() && !state_->draining.load()) {
      respond(http::status::ok, "ready");
    } else {
      respond(http::status::service_unavailable, "not ready");
    }
  } else if (path == "/metrics" && state_->options.metrics) {
    const MetricsSource& source = *state_->options.metrics;
    try {
      const std::string own = state_->metrics.render(state_->pool.stats());
      std::string body = source.render ? source.render(own) : own;
      respond(http::status::ok, std::move(body), source.content_type);
    } catch (const std::exception& e) {
      state_->log(LogLevel::error, fmt::format("rendering /metrics failed: {}", e.what()));
      respond(http::status::internal_server_error, "metrics unavailable");
    }
  } else {
    respond(http::status::not_found, "not found");
  }
}

void HttpSession::respond(http::status status, std::string body, std::string content_type,
                          bool version_header) {
  auto response = std::make_shared<http::response<http::string_body>>(
      status, request_.version() ? request_.version() : 11);
  response->set(http::field::server, "corral");
  response->set(http::field::content_type, content_type);
  if (version_header) response->set(http::field::sec_websocket_version, "13");
  // A refused request (too large, or turned away by the guard) ends its
  // connection.
  const bool keep_alive = request_.keep_alive() && !shutting_down_ &&
                          status != http::status::payload_too_large &&
                          status != http::status::bad_request && status != http::status::forbidden;
  response->keep_alive(keep_alive);
  response->body() = std::move(body);
  response->prepare_payload();
  if (request_.method() == http::verb::head) response->body().clear();
  response_ = response;
  stream_.expires_after(state_->options.idle_timeout);
  http::async_write(
      stream_, *response,
      beast::bind_front_handler(&HttpSession::on_write, shared_from_this(), keep_alive));
}

void HttpSession::on_write(bool keep_alive, beast::error_code ec, std::size_t) {
  response_.reset();
  if (ec || !keep_alive) {
    terminate();
    end();
    return;
  }
  do_wait();
}

bool HttpSession::check_handshake() {
  // RFC 6455 4.2.1 and 4.2.2, checked here so that a bad opening handshake
  // gets a clear answer before the identity hook or a WebSocket session.
  const auto refuse_with = [this](http::status status, std::string reason,
                                  bool version_header = false) {
    state_->log(LogLevel::warn,
                fmt::format("refused a WebSocket upgrade from {}: {}", remote_address_, reason));
    state_->metrics.connection_rejected();
    std::string text = status == http::status::bad_request ? "Bad Request: " : "Upgrade Required: ";
    text += reason;
    text += ".";
    respond(status, boost::json::serialize(boost::json::object{{"error", text}}),
            "application/json", version_header);
  };
  const auto versions = request_.equal_range(http::field::sec_websocket_version);
  if (versions.first == versions.second || std::next(versions.first) != versions.second ||
      versions.first->value() != "13") {
    refuse_with(http::status::upgrade_required,
                "this server speaks WebSocket version 13 only (Sec-WebSocket-Version: 13)", true);
    return false;
  }
  const auto keys = request_.equal_range(http::field::sec_websocket_key);
  if (keys.first == keys.second) {
    refuse_with(http::status::bad_request, "the upgrade has no Sec-WebSocket-Key header");
    return false;
  }
  if (std::next(keys.first) != keys.second) {
    refuse_with(http::status::bad_request,
                "the upgrade has more than one Sec-WebSocket-Key header");
    return false;
  }
  if (!is_websocket_key(keys.first->value())) {
    refuse_with(http::status::bad_request,
                "Sec-WebSocket-Key must be the base64 encoding of 16 bytes (24 characters "
                "ending in ==, RFC 6455 4.2.1)");
    return false;
  }
  return true;
}

void HttpSession::handle_upgrade() {
  if (!state_->accepting.load() || state_->closing.load()) {
    refuse(http::status::service_unavailable);
    return;
  }
  if (!state_->options.identify) {
    on_decision(Decision::admit("anonymous"));
    return;
  }
  Handshake handshake;
  handshake.remote_address = remote_address_;
  for (const auto& field : request_) {
    std::string name = core::ascii_lower(field.name_string());
    auto [it, inserted] = handshake.headers.try_emplace(name, field.value());
    if (!inserted) {
      it->second += ", ";
      it->second += field.value();
    }
  }
  stream_.expires_never();
  auto pending = std::make_shared<PendingDecision>();
  pending->apply = [self = shared_from_this(), executor = stream_.get_executor()](Decision d) {
    asio::post(executor, [self, d = std::move(d)]() mutable { self->on_decision(std::move(d)); });
  };
  DecideCallback decide = [pending](Decision decision) { pending->decide(std::move(decision)); };
  pending.reset();
  try {
    state_->options.identify(handshake, decide);
  } catch (const std::exception& e) {
    state_->log(LogLevel::warn,
                fmt::format("the identity hook threw for {}: {}", remote_address_, e.what()));
    decide(Decision::refuse(fmt::format("the identity hook threw: {}", e.what())));
  } catch (...) {
    state_->log(LogLevel::warn, fmt::format("the identity hook threw for {}", remote_address_));
    decide(Decision::refuse("the identity hook threw"));
  }
}

void HttpSession::on_decision(Decision decision) {
  if (ended_) return;
  if (decision.reject) {
    state_->log(LogLevel::warn,
                fmt::format("refused a connection from {}: {}", remote_address_,
                            decision.reason.empty() ? "(no reason given)" : decision.reason));
    state_->metrics.connection_rejected();
    refuse(http::status::forbidden);
    return;
  }
  // The hook may have answered after close() began or acceptance stopped.
  if (!state_->accepting.load() || state_->closing.load()) {
    refuse(http::status::service_unavailable);
    return;
  }
  upgraded_ = true;
  state_->log(LogLevel::debug, fmt::format("accepted a WebSocket connection from {} as {}",
                                           remote_address_, decision.identity));
  auto session = std::make_shared<WebSocketSession>(state_, std::move(stream_),
                                                    std::move(decision.identity), remote_address_);
  session->hold(std::move(slot_));
  session->start(std::move(request_));
  end();
}

void HttpSession::refuse(http::status status) {
  auto response = std::make_shared<http::response<http::empty_body>>(status, 11);
  response->set(http::field::connection, "close");
  response->content_length(0);
  response_ = response;
  stream_.expires_after(state_->options.idle_timeout);
  http::async_write(stream_, *response,
                    [self = shared_from_this()](beast::error_code, std::size_t) {
                      self->response_.reset();
                      self->terminate();
                      self->end();
                    });
}

void HttpSession::shut_down() {
  shutting_down_ = true;
  terminate();
}

void HttpSession::terminate() {
  if (upgraded_) return;
  beast::error_code ignored;
  stream_.socket().shutdown(Protocol::socket::shutdown_both, ignored);
  stream_.socket().close(ignored);
}

void HttpSession::end() {
  if (ended_) return;
  ended_ = true;
  state_->remove(this);
}

}  // namespace corral::server
