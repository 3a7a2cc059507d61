// src/server/state.hpp: what every session of one server shares: options,
// the pool, the instruments, the acceptance flags and the live-session
// registry the pinger and close() walk.
#pragma once

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "corral/pool.hpp"
#include "corral/server.hpp"
#include "server/metrics.hpp"
#include "server/request_guard.hpp"

namespace corral::server {

namespace asio = boost::asio;
namespace beast = boost::beast;

// Every connection, TCP or unix, is a generic stream socket.
using Protocol = asio::generic::stream_protocol;
using Stream = beast::basic_stream<Protocol, asio::any_io_executor>;

// Session: what the registry can ask of a live connection (on its strand).
class Session {
 public:
  virtual ~Session() = default;
  // One heartbeat round: terminate if the last ping went unanswered, else ping.
  virtual void heartbeat() = 0;
  // Server shutdown: WebSockets close with 1001 after their queued writes;
  // idle HTTP connections just close.
  virtual void shut_down() = 0;
  // Hard stop: close the socket now.
  virtual void terminate() = 0;
};

class ServerState {
 public:
  ServerState(const Options& options, pool::WorkerPool& pool)
      : options(options), pool(pool), metrics(options.instrumented) {}

  const Options& options;
  pool::WorkerPool& pool;
  Metrics metrics;
  // Set by listen() (it needs the bound address), before any session.
  std::optional<RequestGuard> guard;

  std::atomic<bool> accepting{true};
  std::atomic<bool> draining{false};
  // Set when close() stops acceptance; upgrades never open a session after.
  std::atomic<bool> closing{false};

  void log(LogLevel level, const std::string& message) const;

  // Registry: sessions add themselves when they start and remove themselves
  // when they end. `for_each` posts `fn` to each live session's strand.
  void add(Session* key, std::weak_ptr<Session> session, asio::any_io_executor executor);
  void remove(Session* key);
  void for_each(std::function<void(Session&)> fn);
  std::size_t live() const;
  // Called (on a server thread) once no session is live; immediately if none.
  void when_empty(std::function<void()> fn);

 private:
  struct Entry {
    std::weak_ptr<Session> session;
    asio::any_io_executor executor;
  };
  mutable std::mutex mutex_;
  std::unordered_map<Session*, Entry> sessions_;
  std::function<void()> on_empty_;
};

}  // namespace corral::server
