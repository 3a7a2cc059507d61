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
#include <vector>

#include "corral/pool.hpp"
#include "corral/server.hpp"
#include "server/metrics.hpp"
#include "server/request_guard.hpp"
#include "server/route.hpp"

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
  // Mounted before listen() (Routes::add); read-only once sessions exist.
  std::vector<HttpRoute> routes;

  std::atomic<bool> accepting{true};
  std::atomic<bool> draining{false};
  // Set when close() stops acceptance; upgrades never open a session after.
  std::atomic<bool> closing{false};
  // Connections refused over a cap whose 503 is still lingering (waiting for
  // the peer to close so the answer is not lost to a reset). Bounded so a
  // burst of refusals cannot hold more descriptors than the cap admits.
  std::atomic<std::size_t> lingering_refusals{0};

  void log(LogLevel level, const std::string& message) const;

  // Registry: sessions add themselves when they start and remove themselves
  // when they end. `for_each` posts `fn` to each live session's strand.
  void add(Session* key, std::weak_ptr<Session> session, asio::any_io_executor executor);
  void remove(Session* key);
  void for_each(std::function<void(Session&)> fn);
  std::size_t live() const;
  // Called (on a server thread) once no session is live; immediately if none.
  void when_empty(std::function<void()> fn);

  // Connection caps (Options::max_connections, max_connections_per_address):
  // a slot for one accepted connection from `remote`, released when the last
  // copy goes (the connection's owner holds it: HttpSession, then the
  // WebSocketSession or the route's HttpConnection). Null when a cap is
  // reached; `why` then says which.
  std::shared_ptr<void> admit_connection(const std::string& remote, std::string& why);
  std::size_t connections() const;

  // Run cap per identity (Options::max_runs_per_identity): a slot for one
  // more run of `identity`, released when the last copy goes (the session
  // holds it until the run's answer is written). Null when the cap is
  // reached; `why` then says so.
  std::shared_ptr<void> admit_run(const std::string& identity, std::string& why);
  std::size_t runs_of(const std::string& identity) const;
  // Called (on whatever thread closed it) each time a slot is released: the
  // accept loop, backing off for lack of descriptors, retries at once. Set
  // before any connection is admitted.
  void on_connection_released(std::function<void()> fn) { connections_->released = std::move(fn); }

 private:
  struct Entry {
    std::weak_ptr<Session> session;
    asio::any_io_executor executor;
  };
  mutable std::mutex mutex_;
  std::unordered_map<Session*, Entry> sessions_;
  std::function<void()> on_empty_;

  // Shared with every slot, which may outlive the state (a route's
  // connection outlives the server).
  struct Connections {
    std::mutex mutex;
    std::size_t total = 0;
    std::unordered_map<std::string, std::size_t> per_address;
    std::function<void()> released;
  };
  std::shared_ptr<Connections> connections_ = std::make_shared<Connections>();

  // Runs in flight per identity; shared with every slot (a session may
  // outlive the state by a few handlers).
  struct Runs {
    std::mutex mutex;
    std::unordered_map<std::string, std::size_t> per_identity;
  };
  std::shared_ptr<Runs> runs_ = std::make_shared<Runs>();
};

}  // namespace corral::server
