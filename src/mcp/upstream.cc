// A small MCP client: stdio (a spawned command, newline-delimited JSON-RPC)
// and Streamable HTTP (one POST per message, JSON or SSE answers).
#include "mcp/upstream.hpp"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/url/parse.hpp>
#include <condition_variable>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "bind/codecs.hpp"
#include "core/jsonrpc.hpp"
#include "core/utf8.hpp"
#include "mcp/confinement.hpp"
#include "mcp/server_process.hpp"
#include "mcp/service.hpp"

namespace corral::mcp {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace jsonrpc = core::jsonrpc;
namespace http = beast::http;

constexpr const char* kClientRevision = "2025-06-18";

json::object initialize_params() {
  return json::object{{"protocolVersion", kClientRevision},
                      {"capabilities", json::object{}},
                      {"clientInfo", json::object{{"name", "corral"}, {"version", "0.1.0"}}}};
}

// An upstream's message as JSON. Bytes that are not UTF-8 become U+FFFD first
// (core/utf8.hpp), so that one bad byte costs a character, not the answer;
// `replaced` says whether any did.
json::value parse_upstream(std::string text, boost::system::error_code& ec, bool& replaced) {
  replaced = core::replace_invalid_utf8(text);
  return json::parse(text, ec);
}

std::string error_text(const json::object& message) {
  const json::value* error = message.if_contains("error");
  const json::object* e = error ? error->if_object() : nullptr;
  const json::value* text = e ? e->if_contains("message") : nullptr;
  return text && text->is_string() ? std::string(text->get_string()) : "error";
}

bool corral_name(std::string_view name) { return name.starts_with("CORRAL_"); }

// StdioUpstream: a child process speaking MCP on its stdin and stdout.
class StdioUpstream : public UpstreamClient {
 public:
  using Reply = std::function<void(std::optional<json::object> message, std::string error)>;

  // Starts the server (confined, in a unit of its own: server_process.hpp)
  // from the calling thread, whose exit kills the server's init (its
  // parent-death signal follows the thread that cloned it): a thread that
  // outlives the server. Throws what failed to start.
  StdioUpstream(const Upstream& upstream, std::shared_ptr<ServerContainment> containment,
                Logger logger, std::function<void()> on_end = {})
      : logger_(std::move(logger)), on_end_(std::move(on_end)) {
    name_ = upstream.name;
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0)
      throw std::runtime_error("pipe: " + std::string(strerror(errno)));
    if (::pipe2(out, O_CLOEXEC) != 0) {
      ::close(in[0]);
      ::close(in[1]);
      throw std::runtime_error("pipe: " + std::string(strerror(errno)));
    }
    if (::pipe2(stop_, O_CLOEXEC) != 0) {
      for (int fd : {in[0], in[1], out[0], out[1]}) ::close(fd);
      throw std::runtime_error("pipe: " + std::string(strerror(errno)));
    }
    to_child_ = in[1];
    from_child_ = out[0];
    try {
      process_ =
          std::make_unique<ServerProcess>(std::move(containment), upstream.command, in[0], out[1]);
    } catch (const std::exception& e) {
      ::close(in[0]);
      ::close(out[1]);
      close();
      throw std::runtime_error("cannot start " + upstream.command[0] + ": " + e.what());
    }
    ::close(in[0]);
    ::close(out[1]);
    pid_ = process_->pid();
    reader_ = std::thread([this] { read_loop(); });
  }

  ~StdioUpstream() override { close(); }

  std::int64_t request(const std::string& method, json::object params, Reply reply) {
    std::int64_t id = 0;
    {
      std::lock_guard lock(mutex_);
      if (ended_) {
        reply(std::nullopt, "the upstream server " + name_ + " has exited");
        return 0;
      }
      id = ++next_id_;
      pending_[id] = std::move(reply);
    }
    write(jsonrpc::request_message(id, method, std::move(params)));
    return id;
  }

  // Blocking request with a deadline (connect only).
  json::object request_sync(const std::string& method, json::object params,
                            std::chrono::steady_clock::time_point deadline) {
    auto promise = std::make_shared<std::promise<json::object>>();
    auto future = promise->get_future();
    request(method, std::move(params), [promise](std::optional<json::object> m, std::string error) {
      if (!m) {
        promise->set_exception(std::make_exception_ptr(std::runtime_error(error)));
      } else if (m->contains("error")) {
        promise->set_exception(std::make_exception_ptr(std::runtime_error(error_text(*m))));
      } else {
        const json::value* r = m->if_contains("result");
        promise->set_value(r && r->is_object() ? r->get_object() : json::object{});
      }
    });
    if (future.wait_until(deadline) != std::future_status::ready)
      throw std::runtime_error(method + " got no answer in time");
    return future.get();
  }

  void notify(const std::string& method) { write(jsonrpc::notification_message(method, nullptr)); }

  std::function<void()> call_tool(const std::string& tool, json::value arguments,
                                  std::chrono::milliseconds, Done done) override {
    const std::int64_t id =
        request("tools/call", json::object{{"name", tool}, {"arguments", std::move(arguments)}},
                [done](std::optional<json::object> m, std::string error) {
                  if (!m) return done(std::nullopt, error);
                  if (m->contains("error")) return done(std::nullopt, error_text(*m));
                  const json::value* r = m->if_contains("result");
                  done(r && r->is_object() ? std::optional<json::object>(r->get_object())
                                           : std::optional<json::object>(json::object{}),
                       {});
                });
    return [this, id] {
      if (id == 0) return;
      write(jsonrpc::notification_message(
          "notifications/cancelled", json::object{{"requestId", id}, {"reason", "cancelled"}}));
    };
  }

  void close() override {
    {
      std::lock_guard lock(close_mutex_);
      if (closed_) return;
      closed_ = true;
    }
    {
      std::lock_guard lock(write_mutex_);
      if (to_child_ >= 0) ::close(to_child_);
      to_child_ = -1;
    }
    if (process_) {
      // Its whole tree gets SIGTERM, and SIGKILL if anything is still there
      // 2 s later; the unit is empty when this returns.
      const std::string exit = process_->stop(std::chrono::seconds(2));
      {
        std::lock_guard lock(mutex_);
        exit_ = exit;
      }
      process_.reset();
      pid_ = 0;
    }
    if (stop_[1] >= 0) {
      const char byte = 1;
      (void)!::write(stop_[1], &byte, 1);
    }
    if (reader_.joinable()) reader_.join();
    for (int* fd : {&from_child_, &stop_[0], &stop_[1]}) {
      if (*fd >= 0) ::close(*fd);
      *fd = -1;
    }
    fail_pending("the upstream server " + name_ + " was closed");
  }

  int pid() const noexcept { return pid_.load(); }
  bool ended() {
    std::lock_guard lock(mutex_);
    return ended_;
  }
  // How the process ended, once close() reaped it ("exit 0", "signal 15").
  std::string exit_text() {
    std::lock_guard lock(mutex_);
    return exit_;
  }

 private:
  // One message (core/jsonrpc.hpp's builders), one line.
  void write(std::string message) {
    std::string line = std::move(message) + "\n";
    std::lock_guard lock(write_mutex_);
    // A server that exited (one that dies at start, say) makes the write
    // EPIPE; its SIGPIPE must not end this process, whatever the embedder's
    // disposition: blocked here, and a SIGPIPE this write raised consumed.
    sigset_t pipe_only, old, pending;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
    sigpending(&pending);
    const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
    bool broke = false;
    std::size_t at = 0;
    while (to_child_ >= 0 && at < line.size()) {
      const ssize_t n = ::write(to_child_, line.data() + at, line.size() - at);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EPIPE) broke = true;
      if (n <= 0) break;
      at += static_cast<std::size_t>(n);
    }
    if (broke && !was_pending) {
      const timespec zero{};
      while (::sigtimedwait(&pipe_only, nullptr, &zero) < 0 && errno == EINTR) {
      }
    }
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }

  // The reader's thread: nothing may leave it (a throw would be
  // std::terminate); whatever ends it, the calls still waiting are failed.
  void read_loop() noexcept {
    try {
      read_lines();
    } catch (const std::exception& e) {
      log_quietly("upstream " + name_ + ": the reader stopped: " + e.what());
    } catch (...) {
      log_quietly("upstream " + name_ + ": the reader stopped (not a std::exception)");
    }
    try {
      fail_pending("the upstream server " + name_ + " has exited");
    } catch (...) {
      log_quietly("upstream " + name_ + ": failing the calls still waiting threw");
    }
    try {
      if (on_end_) on_end_();
    } catch (...) {
      log_quietly("upstream " + name_ + ": its end could not be reported");
    }
  }

  void log_quietly(const std::string& message) noexcept {
    try {
      if (logger_) logger_(LogLevel::error, message);
    } catch (...) {  // a logger that throws: nothing left to tell
    }
  }

  void read_lines() {
    std::string buffer;
    char chunk[65536];
    while (true) {
      pollfd fds[2] = {{from_child_, POLLIN, 0}, {stop_[0], POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        break;
      }
      if (fds[1].revents) break;
      const ssize_t n = ::read(from_child_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      buffer.append(chunk, static_cast<std::size_t>(n));
      std::size_t newline;
      while ((newline = buffer.find('\n')) != std::string::npos) {
        try {  // one bad message costs that message
          on_line(buffer.substr(0, newline));
        } catch (const std::exception& e) {
          log_quietly("upstream " + name_ + ": a message failed: " + e.what());
        } catch (...) {
          log_quietly("upstream " + name_ + ": a message failed (not a std::exception)");
        }
        buffer.erase(0, newline + 1);
      }
    }
  }

  void on_line(const std::string& line) {
    boost::system::error_code ec;
    bool replaced = false;
    json::value v = parse_upstream(line, ec, replaced);
    if (replaced && logger_)
      logger_(LogLevel::warn,
              "upstream " + name_ + " wrote bytes that are not UTF-8; they read as U+FFFD");
    if (ec || !v.is_object()) {
      if (logger_ && line.find_first_not_of(" \r\t") != std::string::npos)
        logger_(LogLevel::debug, "upstream " + name_ + " wrote a line that is not JSON-RPC");
      return;
    }
    json::object& m = v.get_object();
    const json::value* id = m.if_contains("id");
    const json::value* method = m.if_contains("method");
    if (method && id) {  // a request to us: we answer ping, nothing else
      if (method->is_string() && method->get_string() == "ping") {
        write(jsonrpc::result_message(*id, json::object{}));
      } else {
        write(jsonrpc::error_message(*id, jsonrpc::kMethodNotFound, "Method not found"));
      }
      return;
    }
    if (!id || !id->is_int64()) return;  // notifications and strays
    Reply reply;
    {
      std::lock_guard lock(mutex_);
      auto it = pending_.find(id->get_int64());
      if (it == pending_.end()) return;
      reply = std::move(it->second);
      pending_.erase(it);
    }
    reply(std::move(m), m.contains("error") ? error_text(m) : std::string());
  }

  void fail_pending(const std::string& why) {
    std::map<std::int64_t, Reply> pending;
    {
      std::lock_guard lock(mutex_);
      ended_ = true;
      pending.swap(pending_);
    }
    for (auto& [id, reply] : pending) reply(std::nullopt, why);
  }

  Logger logger_;
  std::function<void()> on_end_;
  std::string exit_;
  std::unique_ptr<ServerProcess> process_;
  std::atomic<pid_t> pid_{0};
  int to_child_ = -1;
  int from_child_ = -1;
  int stop_[2] = {-1, -1};
  std::thread reader_;
  std::mutex mutex_;
  std::mutex write_mutex_;
  std::mutex close_mutex_;
  bool closed_ = false;
  bool ended_ = false;
  std::int64_t next_id_ = 0;
  std::map<std::int64_t, Reply> pending_;
};

// Initializes a started stdio server and lists its tools, by `deadline`.
std::vector<UpstreamTool> initialize_stdio(StdioUpstream& client,
                                           std::chrono::steady_clock::time_point deadline) {
  client.request_sync("initialize", initialize_params(), deadline);
  client.notify("notifications/initialized");
  std::string cursor;
  std::vector<UpstreamTool> tools;
  do {
    json::object params;
    if (!cursor.empty()) params["cursor"] = cursor;
    cursor = read_tools_page(client.request_sync("tools/list", std::move(params), deadline), tools);
  } while (!cursor.empty());
  return tools;
}

std::string rfc3339(std::chrono::steady_clock::time_point at) {
  const auto system = std::chrono::system_clock::now() +
                      std::chrono::duration_cast<std::chrono::system_clock::duration>(
                          at - std::chrono::steady_clock::now());
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}Z", std::chrono::floor<std::chrono::seconds>(system));
}

// RestartingUpstream: a stdio server kept running. When it exits it is
// reaped and started again after a backoff (min, doubling per failed attempt,
// capped at max); each start initializes and re-lists the tools. The
// catalogue keeps the tools listed at the first start (a restart that lists
// others is logged). One monitor thread per upstream, asleep between events.
class RestartingUpstream : public UpstreamClient {
 public:
  RestartingUpstream(Upstream upstream, std::chrono::milliseconds timeout, Logger logger,
                     std::chrono::milliseconds backoff_min, std::chrono::milliseconds backoff_max)
      : upstream_(std::move(upstream)),
        timeout_(timeout),
        logger_(std::move(logger)),
        backoff_min_(backoff_min),
        backoff_max_(backoff_max),
        containment_(std::make_shared<ServerContainment>(upstream_hardening(upstream_))) {
    name_ = upstream_.name;
    // Every start happens on the monitor thread (see StdioUpstream), the
    // first one too; its failure stops the service's start.
    std::promise<void> first;
    std::future<void> started = first.get_future();
    monitor_ = std::thread([this, &first] { monitor(first); });
    try {
      started.get();
    } catch (...) {
      monitor_.join();
      throw;
    }
  }
  ~RestartingUpstream() override { close(); }

  std::function<void()> call_tool(const std::string& tool, json::value arguments,
                                  std::chrono::milliseconds timeout, Done done) override {
    std::shared_ptr<StdioUpstream> client;
    std::string down;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) {
        down = "unavailable: the upstream server " + name_ + " was closed";
      } else if (!current_ || state_ != "up") {
        down = "unavailable: the upstream server " + name_ + " is restarting";
        if (!last_exit_.empty()) down += " (it ended: " + last_exit_ + ")";
        if (next_attempt_)
          down += fmt::format("; the next attempt is in {:.1f} s, at {}; retry then",
                              std::max(0.0, std::chrono::duration<double>(
                                                *next_attempt_ - std::chrono::steady_clock::now())
                                                .count()),
                              rfc3339(*next_attempt_));
        else
          down += "; an attempt is under way, retry in a moment";
      } else {
        client = current_;
      }
    }
    if (!client) {
      done(std::nullopt, down);
      return [] {};
    }
    auto stop = client->call_tool(tool, std::move(arguments), timeout, std::move(done));
    return [client, stop] { stop(); };
  }

  UpstreamStatus status() const override {
    std::lock_guard lock(mutex_);
    UpstreamStatus s;
    s.name = name_;
    s.transport = "stdio";
    s.state = state_;
    s.pid = state_ == "up" ? pid_ : 0;
    s.restarts = restarts_;
    s.last_exit = last_exit_;
    s.since = since_;
    s.next_attempt = next_attempt_;
    s.tools = tools_.size();
    s.unit = std::string(process::to_string(containment_->unit()));
    s.protections = containment_->protections();
    return s;
  }

  void close() override {
    std::shared_ptr<StdioUpstream> client;
    {
      std::lock_guard lock(mutex_);
      if (stopping_ && !monitor_.joinable() && !current_) return;
      stopping_ = true;
      client = std::move(current_);
      wake_.notify_all();
    }
    // The server first, while the monitor thread (its init's parent) lives:
    // SIGTERM, then SIGKILL, to the whole tree.
    if (client) client->close();
    if (monitor_.joinable() && monitor_.get_id() != std::this_thread::get_id()) monitor_.join();
  }

 private:
  // Starts and initializes one server; its end (for `generation`) wakes the
  // monitor. Throws what failed.
  std::shared_ptr<StdioUpstream> start_one(std::uint64_t& generation) {
    {
      std::lock_guard lock(mutex_);
      generation = ++generation_;
    }
    const std::uint64_t g = generation;
    auto client = std::make_shared<StdioUpstream>(upstream_, containment_, logger_, [this, g] {
      std::lock_guard lock(mutex_);
      if (g == live_) {
        dead_ = true;
        wake_.notify_all();
      }
    });
    try {
      client->set_tools(initialize_stdio(*client, std::chrono::steady_clock::now() + timeout_));
    } catch (...) {
      const std::string exit = (client->close(), client->exit_text());
      std::lock_guard lock(mutex_);
      if (!exit.empty()) last_exit_ = exit;
      throw;
    }
    return client;
  }

  // Under mutex_: `client` is the live server.
  void adopt(std::shared_ptr<StdioUpstream> client, std::uint64_t generation) {
    pid_ = client->pid();
    live_ = generation;
    dead_ = client->ended();  // it may have ended before `live_` named it
    current_ = std::move(client);
    state_ = "up";
    since_ = std::chrono::steady_clock::now();
    next_attempt_.reset();
    if (dead_) wake_.notify_all();
  }

  void log(LogLevel level, const std::string& message) noexcept {
    try {
      if (logger_) logger_(level, message);
    } catch (...) {
    }
  }

  // The monitor thread: the first start (its outcome to `first`), then one
  // restart per exit until close().
  void monitor(std::promise<void>& first) noexcept {
    try {
      std::uint64_t generation = 0;
      auto client = start_one(generation);
      std::lock_guard lock(mutex_);
      tools_ = client->tools();
      adopt(std::move(client), generation);
    } catch (...) {
      first.set_exception(std::current_exception());
      return;
    }
    first.set_value();
    int failures = 0;  // attempts in a row that did not come up
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      wake_.wait(lock, [this] { return stopping_ || dead_; });
      if (stopping_) break;
      // The server ended: reap it (close() also stops one that only closed
      // its stdout), then try again after the backoff.
      std::shared_ptr<StdioUpstream> old = std::move(current_);
      dead_ = false;
      live_ = 0;
      lock.unlock();
      if (old) old->close();
      const std::string exit = old ? old->exit_text() : std::string();
      old.reset();
      lock.lock();
      if (!exit.empty()) last_exit_ = exit;
      while (!stopping_) {
        auto delay = backoff_min_ * (1LL << std::min(failures, 20));
        if (delay > backoff_max_) delay = backoff_max_;
        state_ = failures >= 5 ? "failed" : "restarting";
        since_ = std::chrono::steady_clock::now();
        next_attempt_ = since_ + delay;
        log(LogLevel::warn,
            fmt::format("upstream {} ended ({}); restarting in {} ms", name_,
                        last_exit_.empty() ? "no status" : last_exit_, delay.count()));
        if (wake_.wait_until(lock, *next_attempt_, [this] { return stopping_; })) break;
        next_attempt_.reset();
        ++restarts_;
        lock.unlock();
        std::shared_ptr<StdioUpstream> client;
        std::uint64_t generation = 0;
        std::string error;
        try {
          client = start_one(generation);
        } catch (const std::exception& e) {
          error = e.what();
        } catch (...) {
          error = "not a std::exception";
        }
        lock.lock();
        if (!client) {
          ++failures;
          log(LogLevel::warn, "upstream " + name_ + ": the restart failed: " + error);
          continue;
        }
        if (stopping_) {
          lock.unlock();
          client->close();
          lock.lock();
          break;
        }
        failures = 0;
        std::vector<std::string> before, after;
        for (const auto& t : tools_) before.push_back(t.name);
        for (const auto& t : client->tools()) after.push_back(t.name);
        if (before != after)
          log(LogLevel::warn, "upstream " + name_ +
                                  " lists other tools after its restart; the catalogue keeps "
                                  "the first list until corral restarts");
        log(LogLevel::info, fmt::format("upstream {} restarted (pid {})", name_, client->pid()));
        adopt(std::move(client), generation);
        break;
      }
    }
  }

  Upstream upstream_;
  std::chrono::milliseconds timeout_;
  Logger logger_;
  std::chrono::milliseconds backoff_min_, backoff_max_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::shared_ptr<StdioUpstream> current_;
  std::uint64_t generation_ = 0;
  std::uint64_t live_ = 0;
  bool dead_ = false;
  bool stopping_ = false;
  std::string state_ = "up";
  int pid_ = 0;
  std::uint64_t restarts_ = 0;
  std::string last_exit_;
  std::chrono::steady_clock::time_point since_ = std::chrono::steady_clock::now();
  std::optional<std::chrono::steady_clock::time_point> next_attempt_;
  std::shared_ptr<ServerContainment> containment_;
  std::thread monitor_;
};

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

  // Sends one message; returns the JSON-RPC response to it (null for a
  // notification). Throws std::runtime_error.
  json::value post(const json::object& message, std::chrono::milliseconds timeout) {
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
    req.body() = json::serialize(message);
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
    const json::value* id = message.if_contains("id");
    const std::string type(res[http::field::content_type]);
    if (type.rfind("text/event-stream", 0) == 0) {
      std::istringstream in(res.body());
      std::string line, data;
      auto take = [&]() -> std::optional<json::value> {
        boost::system::error_code ec;
        bool replaced = false;
        json::value v = parse_upstream(std::move(data), ec, replaced);
        data.clear();
        if (!ec && v.is_object() && id && v.get_object().if_contains("id") &&
            v.get_object().at("id") == *id && !v.get_object().contains("method"))
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
    json::value answer = post(
        json::object{
            {"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}},
        timeout);
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
    post(json::object{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}, timeout);
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
          post(json::object{{"jsonrpc", "2.0"},
                            {"method", "notifications/cancelled"},
                            {"params", json::object{{"requestId", id}, {"reason", "cancelled"}}}},
               std::chrono::seconds(5));
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

UpstreamStatus UpstreamClient::status() const {
  UpstreamStatus s;
  s.name = name_;
  s.transport = "http";
  s.tools = tools_.size();
  return s;
}

std::string read_tools_page(const json::object& result, std::vector<UpstreamTool>& out) {
  if (const json::value* tools = result.if_contains("tools"); tools && tools->is_array()) {
    for (const auto& t : tools->get_array()) {
      const json::object* o = t.if_object();
      const json::value* name = o ? o->if_contains("name") : nullptr;
      if (!name || !name->is_string()) continue;
      UpstreamTool tool;
      tool.name = std::string(name->get_string());
      if (const json::value* d = o->if_contains("description"); d && d->is_string())
        tool.description = std::string(d->get_string());
      if (const json::value* s = o->if_contains("inputSchema")) tool.input_schema = *s;
      if (const json::value* s = o->if_contains("outputSchema")) tool.output_schema = *s;
      out.push_back(std::move(tool));
    }
  }
  const json::value* next = result.if_contains("nextCursor");
  return next && next->is_string() ? std::string(next->get_string()) : std::string();
}

std::unique_ptr<UpstreamClient> UpstreamClient::connect(const Upstream& upstream,
                                                        std::chrono::milliseconds timeout,
                                                        const Logger& logger,
                                                        std::chrono::milliseconds backoff_min,
                                                        std::chrono::milliseconds backoff_max) {
  const std::string what = "upstream MCP server " + upstream.name;
  try {
    if (!upstream.url.empty()) {
      auto client = std::make_unique<HttpUpstream>(upstream);
      client->connect(timeout);
      client->list_tools(timeout);
      return client;
    }
    auto client =
        std::make_unique<RestartingUpstream>(upstream, timeout, logger, backoff_min, backoff_max);
    return client;
  } catch (const std::exception& e) {
    throw std::runtime_error(what + ": " + e.what());
  }
}

namespace {

std::string read_upstream_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot read the upstream file " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The setting's text as the JSON object of upstreams by name.
json::object upstreams_object(const std::string& text) {
  try {  // a key given twice, which the parse below would hide
    bind::check_input_text(text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("the upstream setting: ") + e.what());
  }
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object())
    throw std::invalid_argument(
        "must be a JSON object {\"NAME\": {\"command\": [..]} or {\"url\": \"http://..\"}}");
  return std::move(v.get_object());
}

// "command": one string split at blanks, or a list of strings.
void read_command(const json::value& value, const std::string& where, Upstream& u) {
  if (value.is_string()) {
    std::istringstream words{std::string(value.get_string())};
    for (std::string w; words >> w;) u.command.push_back(w);
  } else if (value.is_array()) {
    for (const auto& a : value.get_array()) {
      if (!a.is_string()) throw std::invalid_argument(where + ": command must list strings");
      u.command.emplace_back(a.get_string());
    }
  } else {
    throw std::invalid_argument(where + ": command must be a list of strings");
  }
  if (u.command.empty()) throw std::invalid_argument(where + ": command is empty");
}

// "env": {"allow": [names], "set": {name: value}}, never naming a CORRAL_*
// variable.
void read_env(const json::value& value, const std::string& where, Upstream& u) {
  const json::object* env = value.if_object();
  if (!env) throw std::invalid_argument(where + ": env must be {\"allow\": [..], \"set\": {..}}");
  for (const auto& [k, v] : *env) {
    if (k == "allow" && v.is_array()) {
      for (const auto& a : v.get_array()) {
        if (!a.is_string() || a.get_string().empty())
          throw std::invalid_argument(where + ": env.allow must list variable names");
        u.env_allow.emplace_back(a.get_string());
      }
    } else if (k == "set" && v.is_object()) {
      for (const auto& [n, x] : v.get_object()) {
        if (!x.is_string() || n.empty())
          throw std::invalid_argument(where + ": env.set values are strings");
        u.env_set[std::string(n)] = std::string(x.get_string());
      }
    } else {
      throw std::invalid_argument(where +
                                  ": env takes \"allow\" (a list) and \"set\" (an object), not \"" +
                                  std::string(k) + "\"");
    }
  }
  for (const std::string& n : u.env_allow)
    if (corral_name(n))
      throw std::invalid_argument(where + ": env.allow names " + n +
                                  "; no CORRAL_* variable reaches an upstream");
  for (const auto& [n, x] : u.env_set)
    if (corral_name(n))
      throw std::invalid_argument(where + ": env.set names " + n +
                                  "; no CORRAL_* variable reaches an upstream");
}

void read_url(const json::value& value, const std::string& where, Upstream& u) {
  if (!value.is_string()) throw std::invalid_argument(where + ": url must be a string");
  u.url = std::string(value.get_string());
  auto url = boost::urls::parse_uri(u.url);
  if (!url || url->scheme() != "http" || url->host().empty())
    throw std::invalid_argument(where + ": url must be http://host[:port]/path");
}

void read_headers(const json::value& value, const std::string& where, Upstream& u) {
  if (!value.is_object()) throw std::invalid_argument(where + ": headers must be an object");
  for (const auto& [h, hv] : value.get_object()) {
    if (!hv.is_string()) throw std::invalid_argument(where + ": header values are strings");
    u.headers[std::string(h)] = std::string(hv.get_string());
  }
}

// One upstream of the setting: a command (stdio, maybe confined) or a url.
Upstream upstream_from_json(const std::string& name, const json::value& entry) {
  const std::string where = "upstream \"" + name + "\"";
  const json::object* e = entry.if_object();
  if (!e) throw std::invalid_argument(where + ": must be an object");
  Upstream u;
  u.name = name;
  bool has_confinement = false;
  for (const auto& [key, value] : *e) {
    if (key == "command") {
      read_command(value, where, u);
    } else if (key == "env") {
      read_env(value, where, u);
    } else if (key == "confinement") {
      u.confinement = confinement_from_json(value, where + ": confinement");
      has_confinement = true;
    } else if (key == "url") {
      read_url(value, where, u);
    } else if (key == "headers") {
      read_headers(value, where, u);
    } else {
      throw std::invalid_argument(where + ": unknown key \"" + std::string(key) + "\"");
    }
  }
  if (u.command.empty() == u.url.empty())
    throw std::invalid_argument(where + ": give a command or a url");
  if (has_confinement && !u.url.empty())
    throw std::invalid_argument(where + ": confinement applies to a command, not a url");
  return u;
}

}  // namespace

std::vector<Upstream> parse_upstreams(const std::string& setting) {
  const auto first = setting.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  // The setting is the JSON itself, or the path of a file holding it.
  const std::string text = setting[first] == '{' ? setting : read_upstream_file(setting);
  std::vector<Upstream> out;
  for (const auto& [name, entry] : upstreams_object(text))
    out.push_back(upstream_from_json(std::string(name), entry));
  return out;
}

}  // namespace corral::mcp
