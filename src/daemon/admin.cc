#include "daemon/admin.hpp"

#include <sys/socket.h>

#include <cerrno>

#include "server/accept_backoff.hpp"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <optional>
#include <set>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace corral::daemon {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kRequestDeadline = std::chrono::seconds(5);
constexpr std::size_t kBodyLimit = 64 * 1024;

}  // namespace

class AdminListener::Impl {
 public:
  Impl(std::string host, std::uint16_t port, AdminHandler handler,
       std::function<void(const std::string&)> on_error, server::GuardPolicy guard)
      : host_(std::move(host)),
        port_(port),
        handler_(std::move(handler)),
        on_error_(std::move(on_error)),
        policy_(std::move(guard)),
        acceptor_(io_) {
    server::validate(policy_);
  }

  void listen() {
    try {
      bind_and_listen();
    } catch (const boost::system::system_error& e) {
      // As the executor does: the OS error, so a taken port is recognisable.
      throw std::system_error(std::error_code(e.code()),
                              "admin listener on " + host_ + ":" + std::to_string(port_));
    }
    asio::co_spawn(io_, accept_loop(), asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }

  void bind_and_listen() {
    tcp::resolver resolver(io_);
    const auto endpoints = resolver.resolve(host_, std::to_string(port_));
    const tcp::endpoint endpoint = endpoints.begin()->endpoint();
    acceptor_.open(endpoint.protocol());
    acceptor_.set_option(asio::socket_base::reuse_address(true));
    acceptor_.bind(endpoint);
    acceptor_.listen();
    bound_ = acceptor_.local_endpoint();
    guard_.emplace(policy_, server::RequestGuard::scope_of(bound_.address().to_string()));
  }

  std::string address() const {
    const std::string a = bound_.address().to_string();
    return (bound_.address().is_v6() ? "[" + a + "]" : a) + ":" + std::to_string(bound_.port());
  }
  std::uint16_t port() const { return bound_.port(); }

  void close() {
    if (closed_.exchange(true)) return;
    asio::post(io_, [this] {
      boost::system::error_code ignored;
      acceptor_.close(ignored);
      for (auto* stream : open_) stream->socket().close(ignored);
    });
    if (thread_.joinable()) thread_.join();
  }

 private:
  asio::awaitable<void> accept_loop() {
    while (acceptor_.is_open()) {
      auto [ec, socket] = co_await acceptor_.async_accept(asio::as_tuple(asio::use_awaitable));
      if (ec) {
        if (!acceptor_.is_open()) co_return;
        // Out of descriptors: wait (or refuse one through the spare fd)
        // instead of spinning (src/server/accept_backoff.hpp).
        if (server::AcceptBackoff::exhausted(ec)) {
          const auto retry = backoff_.failed(acceptor_.native_handle(), ec);
          if (retry.kind == server::AcceptBackoff::Retry::Kind::when_readable) {
            // The reactor is edge-triggered and a wait does not look at what
            // is already pending (src/server/server.cc says more): once the
            // wait below is queued (the coroutine starts it before this loop's
            // thread runs anything else), the listener is looked at again and
            // a caller that came meanwhile cancels the wait into an accept.
            asio::post(io_, [this] {
              if (acceptor_.is_open() &&
                  server::AcceptBackoff::pending(acceptor_.native_handle())) {
                boost::system::error_code ignored;
                acceptor_.cancel(ignored);
              }
            });
            co_await acceptor_.async_wait(asio::socket_base::wait_read,
                                          asio::as_tuple(asio::use_awaitable));
          } else if (retry.kind == server::AcceptBackoff::Retry::Kind::after_delay) {
            asio::steady_timer timer(io_, retry.delay);
            co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
          }
        }
        continue;
      }
      backoff_.succeeded();
      asio::co_spawn(io_, serve(std::move(socket)), asio::detached);
    }
  }

  asio::awaitable<void> serve(tcp::socket socket) {
    beast::tcp_stream stream(std::move(socket));
    open_.insert(&stream);
    try {
      beast::flat_buffer buffer;
      http::request_parser<http::string_body> parser;
      parser.body_limit(kBodyLimit);
      stream.expires_after(kRequestDeadline);
      co_await http::async_read(stream, buffer, parser, asio::use_awaitable);
      const auto& request = parser.get();
      std::string_view target(request.target().data(), request.target().size());
      if (auto q = target.find('?'); q != std::string_view::npos) target = target.substr(0, q);
      AdminResponse answer;
      // A page rebinding its name to this address, or on a foreign origin,
      // reaches no handler.
      if (const server::GuardVerdict verdict = guard_->check(request); !verdict.allowed()) {
        answer = {verdict.status, verdict.body()};
      } else if (request.method() != http::verb::get && request.method() != http::verb::head &&
                 caller_gone(stream.socket())) {
        // A change whose caller has given up (its deadline passed while
        // this listener was behind) is not applied: a `corral maintenance
        // on` that reported a timeout must not take effect later.
        if (on_error_)
          on_error_("admin " + std::string(request.method_string()) + " " + std::string(target) +
                    ": the caller hung up before it was handled; not applied");
        close_quietly(stream);
        co_return;
      } else {
        try {
          answer = handler_(
              std::string_view(request.method_string().data(), request.method_string().size()),
              target);
        } catch (const std::exception& e) {
          if (on_error_) on_error_(std::string("admin ") + std::string(target) + ": " + e.what());
          answer = {500, std::string(kInternalError)};
        }
      }
      http::response<http::string_body> response{static_cast<http::status>(answer.status),
                                                 request.version()};
      response.set(http::field::content_type, "application/json");
      response.set(http::field::cache_control, "no-store");
      response.keep_alive(false);
      if (request.method() != http::verb::head) response.body() = answer.body + "\n";
      response.prepare_payload();
      co_await http::async_write(stream, response, asio::use_awaitable);
      boost::system::error_code ignored;
      stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    } catch (const std::exception&) {
      // A peer that went away or sent garbage: nothing to answer.
    }
    open_.erase(&stream);
  }

  // True when the peer has closed or reset its side: nothing is left to
  // read and the socket says end of file or an error.
  static bool caller_gone(tcp::socket& socket) {
    char byte;
    const ssize_t n = ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
  }

  void close_quietly(beast::tcp_stream& stream) {
    boost::system::error_code ignored;
    stream.socket().close(ignored);
    open_.erase(&stream);
  }

  std::string host_;
  std::uint16_t port_;
  AdminHandler handler_;
  std::function<void(const std::string&)> on_error_;
  server::AcceptBackoff backoff_{"admin", [this](const std::string& line) {
                                   if (on_error_) on_error_(line);
                                 }};
  server::GuardPolicy policy_;
  std::optional<server::RequestGuard> guard_;  // set once bound
  asio::io_context io_;
  tcp::acceptor acceptor_;
  tcp::endpoint bound_;
  std::thread thread_;
  std::atomic<bool> closed_{false};
  std::set<beast::tcp_stream*> open_;  // io thread only
};

AdminListener::AdminListener(std::string host, std::uint16_t port, AdminHandler handler,
                             std::function<void(const std::string&)> on_error,
                             server::GuardPolicy guard)
    : impl_(std::make_unique<Impl>(std::move(host), port, std::move(handler), std::move(on_error),
                                   std::move(guard))) {}
AdminListener::~AdminListener() { close(); }
void AdminListener::listen() { impl_->listen(); }
std::string AdminListener::address() const { return impl_->address(); }
std::uint16_t AdminListener::port() const { return impl_->port(); }
void AdminListener::close() { impl_->close(); }

}  // namespace corral::daemon
