// src/mcp/http.cc: the Streamable HTTP transport (see http.hpp): the
// endpoint, its sessions and the verbs POST, GET and DELETE; the connection
// itself is http_connection.cc. Every response closes its connection: a JSON
// answer, an SSE stream that ends after the response, or a server stream that
// lives until the session ends.
#include "mcp/http.hpp"

#include <fmt/format.h>

#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include "core/text.hpp"
#include "mcp/http_connection.hpp"
#include "mcp/session.hpp"
#include "server/http_route.hpp"

namespace corral::mcp {

namespace {

namespace http = boost::beast::http;

// CORS: what a browser on an allowed origin may send (what it may read is in
// http_connection.cc, with the answers).
constexpr const char* kCorsMethods = "GET, POST, DELETE";
constexpr const char* kCorsHeaders =
    "Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID";

}  // namespace

// Entry: one session and its server streams.
struct HttpEndpoint::Entry {
  std::mutex mutex;  // guards streams
  std::string id;
  std::shared_ptr<Session> session;
  std::chrono::steady_clock::time_point last_used;
  std::vector<std::weak_ptr<Connection>> streams;  // GET streams
};

namespace {

// HttpStream: the answer to one POSTed request: JSON if the response comes
// first, SSE once a notification must go out before it.
class HttpStream : public Stream {
 public:
  HttpStream(std::shared_ptr<HttpEndpoint::Connection> connection, Headers headers)
      : connection_(std::move(connection)), headers_(std::move(headers)) {}
  void send(std::string message) override {
    std::lock_guard lock(mutex_);
    if (!sse_) {
      connection_->start_sse(headers_);
      sse_ = true;
    }
    connection_->event(message);
  }
  void finish(std::optional<std::string> response) override {
    std::lock_guard lock(mutex_);
    if (sse_) {
      if (response) connection_->event(*response);
      connection_->end();
    } else if (response) {
      connection_->respond(200, std::move(*response), "application/json", headers_);
    } else {
      connection_->start_sse(headers_);  // a cancelled request: an empty stream
      connection_->end();
    }
  }

 private:
  std::shared_ptr<HttpEndpoint::Connection> connection_;
  Headers headers_;
  std::mutex mutex_;
  bool sse_ = false;
};

// Collects what a notification or response produced (an error, at most).
class Collect : public Stream {
 public:
  void send(std::string) override {}
  void finish(std::optional<std::string> response) override { response_ = std::move(response); }
  std::optional<std::string> response_;
};

// Ends a session that left the registry: its calls are answered with
// `reason` (when given; else cancelled) and stopped, its server streams end.
void end_session(HttpEndpoint::Entry& entry, const std::optional<Failure>& reason = std::nullopt) {
  if (reason) {
    entry.session->close(*reason);
  } else {
    entry.session->close();
  }
  std::vector<std::weak_ptr<HttpEndpoint::Connection>> streams;
  {
    std::lock_guard lock(entry.mutex);
    streams.swap(entry.streams);
  }
  for (auto& weak : streams)
    if (auto c = weak.lock()) c->end();
}

}  // namespace

HttpEndpoint::HttpEndpoint(std::shared_ptr<Service> service, HttpOptions options)
    : service_(std::move(service)), options_(std::move(options)) {}

HttpEndpoint::~HttpEndpoint() { close(); }

server::HttpRoute HttpEndpoint::route(std::function<std::shared_ptr<HttpEndpoint>()> locate,
                                      std::size_t body_limit) {
  server::HttpRoute route;
  route.path = "/mcp";
  route.body_limit = body_limit;
  route.handler = [locate](std::unique_ptr<server::HttpConnection> connection) {
    if (auto self = locate()) {
      self->handle(std::move(connection));
    } else {
      auto c = std::make_shared<Connection>(std::move(connection));
      c->respond(503, R"({"error":"MCP is not available."})");
    }
  };
  return route;
}

std::size_t HttpEndpoint::sessions() const {
  std::lock_guard lock(mutex_);
  return sessions_.size();
}

void HttpEndpoint::close() {
  std::map<std::string, std::shared_ptr<Entry>> sessions;
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
    sessions.swap(sessions_);
  }
  const Failure stopping{FailureCode::unavailable,
                         "The corral server is shutting down: this call was stopped before it "
                         "finished; retry it on a running server.",
                         nullptr};
  for (auto& [id, entry] : sessions) end_session(*entry, stopping);
}

void HttpEndpoint::handle(std::unique_ptr<server::HttpConnection> taken) {
  auto connection = std::make_shared<Connection>(std::move(taken));
  // Host and Origin were checked by the server's request guard before the
  // request reached this route. A CORS preflight from an allowed origin is
  // answered before authentication: browsers send it without credentials.
  if (connection->request().method() == http::verb::options && !connection->origin().empty() &&
      connection->request().find("Access-Control-Request-Method") != connection->request().end()) {
    connection->respond(204, {}, "application/json",
                        {{"Access-Control-Allow-Methods", kCorsMethods},
                         {"Access-Control-Allow-Headers", kCorsHeaders},
                         {"Access-Control-Max-Age", "600"}});
    return;
  }
  if (!options_.identify) {
    serve(std::move(connection));
    return;
  }
  server::Handshake handshake;
  handshake.remote_address = connection->remote();
  for (const auto& field : connection->request()) {
    auto [it, inserted] = handshake.headers.try_emplace(core::ascii_lower(field.name_string()),
                                                        std::string(field.value()));
    if (!inserted) it->second += ", " + std::string(field.value());
  }
  // The first decision wins; a hook that drops its callback without deciding
  // refuses (a broken policy admits nobody).
  struct Pending {
    std::function<void(server::Decision)> apply;
    std::atomic<bool> decided{false};
    void decide(server::Decision d) {
      if (!decided.exchange(true)) apply(std::move(d));
    }
    ~Pending() {
      if (!decided.exchange(true))
        apply(server::Decision::refuse("the identity hook never decided"));
    }
  };
  auto pending = std::make_shared<Pending>();
  pending->apply = [self = shared_from_this(), connection](server::Decision decision) {
    if (decision.reject) {
      if (self->options_.logger)
        self->options_.logger(LogLevel::warn, fmt::format("refused an MCP request from {}: {}",
                                                          connection->remote(), decision.reason));
      connection->respond(401, R"({"error":"Unauthorized: a valid bearer token is required."})",
                          "application/json", {{"WWW-Authenticate", "Bearer"}});
      return;
    }
    self->serve(connection);
  };
  server::DecideCallback decide = [pending](server::Decision d) { pending->decide(std::move(d)); };
  pending.reset();
  try {
    options_.identify(handshake, decide);
  } catch (const std::exception& e) {
    decide(server::Decision::refuse(std::string("the identity hook threw: ") + e.what()));
  }
}

void HttpEndpoint::serve(std::shared_ptr<Connection> connection) {
  {
    std::lock_guard lock(mutex_);
    if (closed_) {
      connection->respond(503, R"({"error":"The server is shutting down."})");
      return;
    }
  }
  sweep(std::chrono::steady_clock::now());
  const auto method = connection->request().method();
  if (method == http::verb::post) {
    post(connection);
  } else if (method == http::verb::get) {
    get(connection);
  } else if (method == http::verb::delete_) {
    remove(connection);
  } else {
    connection->respond(405, R"({"error":"Method not allowed: use POST, GET or DELETE."})",
                        "application/json", {{"Allow", "GET, POST, DELETE"}});
  }
}

void HttpEndpoint::sweep(std::chrono::steady_clock::time_point now) {
  std::vector<std::shared_ptr<Entry>> expired;
  {
    std::lock_guard lock(mutex_);
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      if (now - it->second->last_used > options_.session_idle) {
        expired.push_back(it->second);
        it = sessions_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& entry : expired) end_session(*entry);
}

std::shared_ptr<HttpEndpoint::Entry> HttpEndpoint::find(
    const std::shared_ptr<Connection>& connection) {
  const std::string id = connection->header("Mcp-Session-Id");
  if (id.empty()) {
    connection->respond(400, error_message(nullptr, kInvalidRequest,
                                           "Bad Request: the Mcp-Session-Id header is required "
                                           "(send initialize first)."));
    return nullptr;
  }
  const std::string version = connection->header("MCP-Protocol-Version");
  if (!version.empty() && !is_supported_revision(version)) {
    connection->respond(
        400, error_message(nullptr, kInvalidRequest,
                           "Bad Request: unsupported MCP-Protocol-Version " + version + "."));
    return nullptr;
  }
  std::lock_guard lock(mutex_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) {
    connection->respond(404, error_message(nullptr, kInvalidRequest,
                                           "Session not found: it ended or expired; initialize "
                                           "a new one."));
    return nullptr;
  }
  it->second->last_used = std::chrono::steady_clock::now();
  return it->second;
}

namespace {

// Whether a POST may be served: it sends JSON and accepts both JSON and SSE
// (or anything); otherwise answers 415 or 406.
bool acceptable_post(HttpEndpoint::Connection& connection) {
  const std::string type = core::ascii_lower(connection.header("Content-Type"));
  if (type.find("application/json") == std::string::npos) {
    connection.respond(415, error_message(nullptr, kInvalidRequest,
                                          "Unsupported Media Type: send application/json."));
    return false;
  }
  const std::string accept = core::ascii_lower(connection.header("Accept"));
  const bool any = accept.find("*/*") != std::string::npos;
  if (!any && (accept.find("application/json") == std::string::npos ||
               accept.find("text/event-stream") == std::string::npos)) {
    connection.respond(406, error_message(nullptr, kInvalidRequest,
                                          "Not Acceptable: accept both application/json and "
                                          "text/event-stream."));
    return false;
  }
  return true;
}

// The POSTed message, or nothing after answering 400 (not JSON, or a batch).
std::optional<json::value> posted_message(HttpEndpoint::Connection& connection) {
  const std::string& body = connection.request().body();
  boost::system::error_code ec;
  json::value message = json::parse(body, ec);
  if (ec) {
    connection.respond(400, error_message(nullptr, kParseError, "Parse error: " + ec.message()));
    return std::nullopt;
  }
  if (message.is_array()) {
    connection.respond(
        400, error_message(nullptr, kInvalidRequest,
                           "Invalid Request: JSON-RPC batches are not supported (MCP 2025-06-18 "
                           "removed batching); send one message at a time."));
    return std::nullopt;
  }
  return message;
}

// The session's messages that belong to no request go out on its newest
// server stream (GET) that is still open, or nowhere.
void send_background_on_streams(const std::shared_ptr<HttpEndpoint::Entry>& entry) {
  std::weak_ptr<HttpEndpoint::Entry> weak = entry;
  entry->session->set_background([weak](std::string m) {
    auto e = weak.lock();
    if (!e) return;
    std::lock_guard lock(e->mutex);
    for (auto it = e->streams.rbegin(); it != e->streams.rend(); ++it) {
      if (auto c = it->lock(); c && c->open()) {
        c->event(m);
        return;
      }
    }
  });
}

}  // namespace

void HttpEndpoint::post(const std::shared_ptr<Connection>& connection) {
  if (!acceptable_post(*connection)) return;
  const std::optional<json::value> message = posted_message(*connection);
  if (!message) return;
  const json::object* object = message->if_object();
  const json::value* method = object ? object->if_contains("method") : nullptr;
  const bool is_request = method && object->contains("id");
  const bool is_initialize =
      is_request && method->is_string() && method->get_string() == "initialize";
  if (is_initialize) {
    open_session(connection, *object);
  } else {
    post_to_session(connection, is_request);
  }
}

void HttpEndpoint::open_session(const std::shared_ptr<Connection>& connection,
                                const json::object& initialize) {
  const std::string& body = connection->request().body();
  // A session exists only once its initialize succeeded: a refused one
  // (bad params, a bad id) is answered and leaves nothing behind.
  auto full = [&] {
    const std::optional<Id> id = request_id(body, initialize.at("id"));
    connection->respond(503, error_message(id ? *id : Id(), kInternalError,
                                           fmt::format("Too many MCP sessions (at most {}); "
                                                       "end one or retry later.",
                                                       options_.max_sessions)));
  };
  {
    std::lock_guard lock(mutex_);
    if (sessions_.size() >= options_.max_sessions) return full();
  }
  auto entry = std::make_shared<Entry>();
  entry->id = core::random_hex128();
  entry->session = std::make_shared<Session>(service_);
  entry->last_used = std::chrono::steady_clock::now();
  auto collect = std::make_shared<Collect>();
  entry->session->handle(body, collect);  // initialize answers at once
  if (!entry->session->initialized() || !collect->response_) {
    entry->session->close();
    if (collect->response_) {
      connection->respond(400, std::move(*collect->response_));
    } else {
      connection->respond(400, error_message(nullptr, kInvalidRequest,
                                             "Invalid Request: initialize was not answered."));
    }
    return;
  }
  {
    std::lock_guard lock(mutex_);
    if (closed_) {
      connection->respond(503, R"({"error":"The server is shutting down."})");
      return;
    }
    if (sessions_.size() >= options_.max_sessions) return full();
    sessions_[entry->id] = entry;
  }
  send_background_on_streams(entry);
  connection->respond(200, std::move(*collect->response_), "application/json",
                      {{"Mcp-Session-Id", entry->id}});
}

void HttpEndpoint::post_to_session(const std::shared_ptr<Connection>& connection, bool is_request) {
  std::shared_ptr<Entry> entry = find(connection);
  if (!entry) return;
  const std::string& body = connection->request().body();
  Headers headers;
  headers.emplace_back("Mcp-Session-Id", entry->id);
  if (!is_request) {
    auto collect = std::make_shared<Collect>();
    entry->session->handle(body, collect);
    if (collect->response_) {
      connection->respond(400, std::move(*collect->response_), "application/json", headers);
    } else {
      connection->respond(202, {}, "application/json", headers);
    }
    return;
  }
  entry->session->handle(body, std::make_shared<HttpStream>(connection, std::move(headers)));
}

void HttpEndpoint::get(const std::shared_ptr<Connection>& connection) {
  const std::string accept = core::ascii_lower(connection->header("Accept"));
  if (accept.find("text/event-stream") == std::string::npos &&
      accept.find("*/*") == std::string::npos) {
    connection->respond(406,
                        error_message(nullptr, kInvalidRequest,
                                      "Not Acceptable: the server stream is text/event-stream."));
    return;
  }
  std::shared_ptr<Entry> entry = find(connection);
  if (!entry) return;
  {
    std::lock_guard lock(entry->mutex);
    std::erase_if(entry->streams, [](const std::weak_ptr<Connection>& w) {
      auto c = w.lock();
      return !c || !c->open();
    });
    entry->streams.push_back(connection);
  }
  connection->start_sse({{"Mcp-Session-Id", entry->id}});
}

void HttpEndpoint::remove(const std::shared_ptr<Connection>& connection) {
  std::shared_ptr<Entry> entry = find(connection);
  if (!entry) return;
  {
    std::lock_guard lock(mutex_);
    sessions_.erase(entry->id);
  }
  end_session(*entry);
  connection->respond(200, {}, "application/json");
}

}  // namespace corral::mcp
