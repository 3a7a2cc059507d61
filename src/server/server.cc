// The Server facade: the io threads, the acceptor, the heartbeat and the
// close() sequence. Sessions live in http_session.cc and
// websocket_session.cc.
#include "corral/server.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <condition_variable>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "server/accept_backoff.hpp"
#include "server/http_route.hpp"
#include "server/http_session.hpp"
#include "server/state.hpp"

namespace corral::server {

namespace {

std::string endpoint_address(const Protocol::endpoint& endpoint, std::uint16_t* port,
                             std::string* family) {
  const sockaddr* address = endpoint.data();
  char text[INET6_ADDRSTRLEN] = {0};
  if (address->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(address);
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    if (port) *port = ntohs(in->sin_port);
    if (family) *family = "IPv4";
    return text;
  }
  if (address->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(address);
    inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
    if (port) *port = ntohs(in6->sin6_port);
    if (family) *family = "IPv6";
    return text;
  }
  if (port) *port = 0;
  if (family) *family = "unix";
  return "unix";
}

std::system_error os_error(const boost::system::error_code& ec, const std::string& what) {
  return std::system_error(std::error_code(ec.value(), std::system_category()), what);
}

}  // namespace

IdentityHook sync_identity(std::function<Decision(const Handshake&)> policy) {
  return [policy = std::move(policy)](const Handshake& handshake, DecideCallback decide) {
    decide(policy(handshake));
  };
}

MetricsSource own_metrics() {
  return MetricsSource{kPrometheusContentType, [](const std::string& own) { return own; }};
}

std::string Address::to_string() const {
  if (family == "unix") return "unix:" + address;
  if (family == "IPv6") return fmt::format("[{}]:{}", address, port);
  return fmt::format("{}:{}", address, port);
}

void validate(const Options& options) {
  using std::chrono::milliseconds;
  if (options.socket_path.empty() && options.host.empty()) {
    throw std::invalid_argument("host is empty (set a host, or a socket_path)");
  }
  if (options.socket_path.size() >= sizeof(sockaddr_un::sun_path)) {
    throw std::invalid_argument(
        fmt::format("socket_path is longer than {} bytes", sizeof(sockaddr_un::sun_path) - 1));
  }
  if (options.default_timeout <= milliseconds(0)) {
    throw std::invalid_argument("default_timeout must be positive");
  }
  if (options.max_timeout <= milliseconds(0)) {
    throw std::invalid_argument("max_timeout must be positive");
  }
  if (options.response_limit && *options.response_limit == 0) {
    throw std::invalid_argument("response_limit must be positive (or unset)");
  }
  if (options.max_connection_age && *options.max_connection_age <= milliseconds(0)) {
    throw std::invalid_argument("max_connection_age must be positive (or unset)");
  }
  if (options.keep_alive_timeout <= milliseconds(0)) {
    throw std::invalid_argument("keep_alive_timeout must be positive");
  }
  if (options.headers_timeout <= milliseconds(0)) {
    throw std::invalid_argument("headers_timeout must be positive");
  }
  if (options.idle_timeout <= milliseconds(0)) {
    throw std::invalid_argument("idle_timeout must be positive");
  }
  if (options.max_message_size == 0) {
    throw std::invalid_argument("max_message_size must be positive");
  }
  if (options.max_write_queue == 0) {
    throw std::invalid_argument("max_write_queue must be positive");
  }
  if (options.shutdown_delay < milliseconds(0) || options.shutdown_drain < milliseconds(0)) {
    throw std::invalid_argument("shutdown_delay and shutdown_drain may not be negative");
  }
  if (options.io_threads == 0) throw std::invalid_argument("io_threads must be at least 1");
  if (options.metrics && !options.metrics->render) {
    throw std::invalid_argument("metrics.render is empty (use own_metrics())");
  }
  try {
    validate(GuardPolicy{options.allowed_origins, options.allowed_hosts});
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("allowed_origins or allowed_hosts: {}", e.what()));
  }
  sandbox::Options limits = options.run_limits;
  limits.timeout = std::chrono::seconds(1);
  sandbox::validate(limits);
  pool::validate(options.pool);
}

class Server::Impl : public std::enable_shared_from_this<Server::Impl> {
 public:
  explicit Impl(Options options)
      : options_(prepare(std::move(options))),
        state_(std::make_shared<ServerState>(options_, pool_)),
        acceptor_(asio::make_strand(ioc_)),
        heartbeat_(acceptor_.get_executor()),
        delay_(acceptor_.get_executor()),
        linger_(acceptor_.get_executor()),
        accept_retry_(acceptor_.get_executor()),
        backoff_("executor",
                 [state = state_](const std::string& line) { state->log(LogLevel::warn, line); }) {
    const pool::Options& pool = pool_.options();  // max_workers 0 already resolved
    state_->metrics.set_capacity(pool.max_workers * pool.executions_per_worker, pool.max_queue);
    if (state_->metrics.instrumented()) {
      pool_.subscribe([state = state_](const pool::Event& event) {
        if (event.kind == pool::Event::Kind::execution_started) {
          state->metrics.queue_waited(event.duration.count());
        }
      });
    }
  }

  ~Impl() { stop_threads(); }

  static Options prepare(Options options) {
    validate(options);
    if (!options.instrumented) options.pool.instrumented = false;
    if (!options.pool.worker_stderr && options.logger) {
      // A worker's stderr joins the structured log, tagged with the worker.
      options.pool.worker_stderr = [logger = options.logger](std::uint64_t worker, int pid,
                                                             std::string_view line) {
        logger(LogLevel::warn, "worker " + std::to_string(worker) + " (pid " + std::to_string(pid) +
                                   ") stderr: " + std::string(line));
      };
    }
    return options;
  }

  void listen() {
    std::lock_guard lock(mutex_);
    if (listened_) throw std::logic_error("listen() was already called");
    if (close_started_) throw std::logic_error("listen() after close()");
    boost::system::error_code ec;
    Protocol::endpoint endpoint;
    if (!options_.socket_path.empty()) {
      struct stat info {};
      if (::lstat(options_.socket_path.c_str(), &info) == 0 && S_ISSOCK(info.st_mode)) {
        ::unlink(options_.socket_path.c_str());
      }
      endpoint = asio::local::stream_protocol::endpoint(options_.socket_path);
    } else {
      asio::ip::address address = asio::ip::make_address(options_.host, ec);
      if (ec) {
        asio::ip::tcp::resolver resolver(ioc_);
        auto results = resolver.resolve(options_.host, std::to_string(options_.port), ec);
        if (ec || results.empty()) {
          throw os_error(ec, fmt::format("cannot resolve host {}", options_.host));
        }
        endpoint = results.begin()->endpoint();
      } else {
        endpoint = asio::ip::tcp::endpoint(address, options_.port);
      }
    }
    const std::string where = !options_.socket_path.empty()
                                  ? options_.socket_path
                                  : fmt::format("{}:{}", options_.host, options_.port);
    acceptor_.open(endpoint.protocol(), ec);
    if (ec) throw os_error(ec, "cannot open a socket for " + where);
    if (options_.socket_path.empty()) {
      acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    }
    acceptor_.bind(endpoint, ec);
    if (ec) {
      acceptor_.close();
      throw os_error(ec, "cannot listen on " + where);
    }
    acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      acceptor_.close();
      throw os_error(ec, "cannot listen on " + where);
    }
    bound_ = acceptor_.local_endpoint();
    // Before any session exists; read-only afterwards.
    state_->guard.emplace(GuardPolicy{options_.allowed_origins, options_.allowed_hosts},
                          RequestGuard::scope_of(options_.socket_path.empty()
                                                     ? endpoint_address(bound_, nullptr, nullptr)
                                                     : std::string()));
    listened_ = true;
    guard_.emplace(ioc_.get_executor());
    for (std::size_t i = 0; i < options_.io_threads; ++i) {
      threads_.emplace_back([this] { ioc_.run(); });
    }
    // A descriptor freed ends a backoff at once (src/server/accept_backoff.hpp).
    state_->on_connection_released([weak = weak_from_this()] {
      auto self = weak.lock();
      if (!self || !self->backing_off_.load()) return;
      asio::post(self->acceptor_.get_executor(), [self] {
        if (self->backing_off_.load()) self->accept_retry_.cancel();
      });
    });
    asio::dispatch(acceptor_.get_executor(), [self = shared_from_this()] {
      self->do_accept();
      self->arm_heartbeat();
    });
  }

  void add_route(HttpRoute route) {
    std::lock_guard lock(mutex_);
    if (listened_ || close_started_) throw std::logic_error("a route is mounted before listen()");
    if (route.path.empty() || route.path[0] != '/') {
      throw std::logic_error("a route's path is absolute: " + route.path);
    }
    for (const HttpRoute& mounted : state_->routes) {
      if (mounted.path == route.path) throw std::logic_error("route mounted twice: " + route.path);
    }
    state_->routes.push_back(std::move(route));
  }

  Address address() const {
    std::lock_guard lock(mutex_);
    if (!listened_) throw std::logic_error("address() before listen()");
    Address out;
    if (!options_.socket_path.empty()) {
      out.address = options_.socket_path;
      out.family = "unix";
      return out;
    }
    out.address = endpoint_address(bound_, &out.port, &out.family);
    return out;
  }

  void stop_accepting() { state_->accepting.store(false); }

  void resume_accepting() {
    std::lock_guard lock(mutex_);
    if (close_started_) {
      throw Error(FailureCode::internal, "A closed server cannot accept connections again.");
    }
    state_->accepting.store(true);
  }

  bool accepting() const { return state_->accepting.load(); }
  bool draining() const { return state_->draining.load(); }

  void close(std::function<void()> done) {
    std::unique_lock lock(mutex_);
    if (close_finished_) {
      lock.unlock();
      if (done) done();
      return;
    }
    if (done) waiters_.push_back(std::move(done));
    if (close_started_) return;
    close_started_ = true;
    state_->draining.store(true);
    if (!listened_) {
      lock.unlock();
      // The pool's thread must never hold the last reference to this Impl
      // (its destructor joins that thread): the pool's callbacks take `this`.
      pool_.shutdown(options_.shutdown_drain, [this] { finish_close(); });
      return;
    }
    lock.unlock();
    delay_.expires_after(options_.shutdown_delay);
    delay_.async_wait(
        [self = shared_from_this()](boost::system::error_code) { self->stop_and_drain(); });
  }

  void close_blocking() {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    close([&] {
      std::lock_guard lock(m);
      done = true;
      cv.notify_all();
    });
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return done; });
  }

  pool::WorkerPool& pool() { return pool_; }
  std::string render_metrics() const { return state_->metrics.render(pool_.stats()); }
  bool listened() const {
    std::lock_guard lock(mutex_);
    return listened_;
  }

 private:
  void do_accept() {
    acceptor_.async_accept(
        asio::make_strand(ioc_),
        [self = shared_from_this()](boost::system::error_code ec, Protocol::socket socket) {
          if (ec) {
            if (ec == asio::error::operation_aborted || !self->acceptor_.is_open()) return;
            if (!AcceptBackoff::exhausted(ec)) {
              self->state_->log(LogLevel::warn, "accept failed: " + ec.message());
              self->do_accept();
              return;
            }
            // Out of descriptors: the connection stays in the backlog, so
            // accepting again at once would spin (src/server/accept_backoff.hpp).
            const auto retry = self->backoff_.failed(self->acceptor_.native_handle(), ec);
            if (retry.kind == AcceptBackoff::Retry::Kind::now) {
              self->do_accept();
              return;
            }
            if (retry.kind == AcceptBackoff::Retry::Kind::when_readable) {
              // The next caller is told (or accepted, if a descriptor was
              // freed meanwhile) as soon as it arrives.
              self->acceptor_.async_wait(asio::socket_base::wait_read,
                                         [self](boost::system::error_code wait_ec) {
                                           if (!self->acceptor_.is_open()) return;
                                           if (wait_ec && wait_ec != asio::error::operation_aborted)
                                             return;
                                           self->do_accept();
                                         });
              // asio's reactor is edge-triggered and a wait does not look at
              // what is already pending: a caller that arrived between the
              // backoff's look at the listener and this wait was seen by the
              // reactor with no wait queued, and would be left in the
              // backlog until the next caller came (CI: a wave of 1,000, 413
              // held for 30 s). Looked at again with the wait queued: the
              // wait is cancelled, and its handler accepts.
              if (AcceptBackoff::pending(self->acceptor_.native_handle())) {
                boost::system::error_code ignored;
                self->acceptor_.cancel(ignored);
              }
              return;
            }
            // Woken early (cancelled) when a connection closes.
            self->backing_off_.store(true);
            self->accept_retry_.expires_after(retry.delay);
            self->accept_retry_.async_wait([self](boost::system::error_code) {
              self->backing_off_.store(false);
              if (self->acceptor_.is_open()) self->do_accept();
            });
            return;
          }
          self->backoff_.succeeded();
          if (self->options_.socket_path.empty()) {
            boost::system::error_code ignored;
            socket.set_option(asio::ip::tcp::no_delay(true), ignored);
          }
          boost::system::error_code remote_ec;
          std::string remote =
              endpoint_address(socket.remote_endpoint(remote_ec), nullptr, nullptr);
          if (remote_ec) remote = "unknown";
          std::string why;
          std::shared_ptr<void> slot = self->state_->admit_connection(remote, why);
          if (!slot) {
            self->log_refusal(remote, why);
            refuse_connection(self->state_, std::move(socket), why);
          } else {
            std::make_shared<HttpSession>(self->state_, std::move(socket), std::move(remote),
                                          std::move(slot))
                ->run();
          }
          self->do_accept();
        });
  }

  // One line per second at most for refusals at the connection caps; the
  // ones in between are counted in the next line.
  void log_refusal(const std::string& remote, const std::string& why) {
    const auto now = std::chrono::steady_clock::now();
    if (refusals_logged_ && now - last_refusal_log_ < std::chrono::seconds(1)) {
      ++refusals_unlogged_;
      return;
    }
    refusals_logged_ = true;
    last_refusal_log_ = now;
    std::string line = fmt::format("refused a connection from {}: {}", remote, why);
    if (refusals_unlogged_ > 0) {
      line += fmt::format(" [{} more refused since the last line]", refusals_unlogged_);
      refusals_unlogged_ = 0;
    }
    state_->log(LogLevel::warn, line);
  }

  void arm_heartbeat() {
    if (options_.ping_interval <= std::chrono::milliseconds(0) || heartbeat_stopped_) return;
    heartbeat_.expires_after(options_.ping_interval);
    heartbeat_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (ec || self->heartbeat_stopped_) return;
      self->state_->for_each([](Session& session) { session.heartbeat(); });
      self->arm_heartbeat();
    });
  }

  // After the shutdown delay: no more upgrades, no more pings, drain the pool.
  void stop_and_drain() {
    state_->accepting.store(false);
    state_->closing.store(true);
    heartbeat_stopped_ = true;
    heartbeat_.cancel();
    pool_.shutdown(options_.shutdown_drain, [this] {
      asio::post(acceptor_.get_executor(), [self = shared_from_this()] { self->close_sockets(); });
    });
  }

  // After the pool is down: every socket closes (1001 after queued results).
  void close_sockets() {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    accept_retry_.cancel();
    if (!options_.socket_path.empty()) ::unlink(options_.socket_path.c_str());
    state_->for_each([](Session& session) { session.shut_down(); });
    // Sockets whose peer never completes the closing handshake are cut.
    linger_.expires_after(std::chrono::seconds(15));
    linger_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec) self->state_->for_each([](Session& session) { session.terminate(); });
    });
    state_->when_empty([self = shared_from_this()] {
      asio::post(self->acceptor_.get_executor(), [self] {
        self->linger_.cancel();
        self->finish_close();
      });
    });
  }

  void finish_close() {
    std::vector<std::function<void()>> waiters;
    {
      std::lock_guard lock(mutex_);
      close_finished_ = true;
      waiters.swap(waiters_);
    }
    for (auto& waiter : waiters) waiter();
  }

  // Joins the io threads once close() has finished (no handler is left).
 public:
  void stop_threads() {
    guard_.reset();
    for (auto& thread : threads_) {
      if (thread.get_id() == std::this_thread::get_id()) {
        thread.detach();
      } else {
        thread.join();
      }
    }
    threads_.clear();
  }

 private:
  Options options_;
  std::shared_ptr<ServerState> state_;
  asio::io_context ioc_;
  asio::basic_socket_acceptor<Protocol, asio::strand<asio::io_context::executor_type>> acceptor_;
  asio::steady_timer heartbeat_;
  asio::steady_timer delay_;
  asio::steady_timer linger_;
  asio::steady_timer accept_retry_;
  // Used on the acceptor's strand only.
  AcceptBackoff backoff_;
  std::atomic<bool> backing_off_{false};
  bool refusals_logged_ = false;
  std::chrono::steady_clock::time_point last_refusal_log_{};
  std::uint64_t refusals_unlogged_ = 0;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> guard_;
  std::vector<std::thread> threads_;
  Protocol::endpoint bound_;
  bool heartbeat_stopped_ = false;

  mutable std::mutex mutex_;
  bool listened_ = false;
  bool close_started_ = false;
  bool close_finished_ = false;
  std::vector<std::function<void()>> waiters_;

  // Declared last, destroyed first: its destructor joins the pool's thread,
  // which may still be returning from a callback that posted into ioc_.
  pool::WorkerPool pool_{options_.pool};
};

Server::Server(Options options) : impl_(std::make_shared<Impl>(std::move(options))) {}

Server::~Server() {
  impl_->close_blocking();
  impl_->stop_threads();
}

void Server::listen() { impl_->listen(); }

void Routes::add(Server& server, HttpRoute route) { server.impl_->add_route(std::move(route)); }
Address Server::address() const { return impl_->address(); }
void Server::stop_accepting() { impl_->stop_accepting(); }
void Server::resume_accepting() { impl_->resume_accepting(); }
bool Server::accepting() const noexcept { return impl_->accepting(); }
bool Server::draining() const noexcept { return impl_->draining(); }
void Server::close(std::function<void()> done) { impl_->close(std::move(done)); }
void Server::close() { impl_->close_blocking(); }
pool::WorkerPool& Server::pool() noexcept { return impl_->pool(); }
std::string Server::render_metrics() const { return impl_->render_metrics(); }

}  // namespace corral::server
