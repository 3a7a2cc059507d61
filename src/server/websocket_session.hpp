// src/server/websocket_session.hpp: one executor protocol connection.
//
// Beast's shape: a strand per connection, do_x()/on_x() pairs, one write in
// flight (a queue). The read loop is armed while the bytes queued for the
// socket are at most Options::max_write_queue; above it reading pauses until
// the queue drains, so a caller that stops reading fills its own TCP window
// and can start nothing more. The session owns the execute requests it
// started (by request id) and the tool calls it is waiting on (by the
// server's call id); the pool's threads reach it only through call_tool()
// and deliver(), which post onto the strand.
//
// A run holds a slot of the per-connection and per-identity caps from its
// admission until its answer is written to the socket (or dropped), so the
// caps bound the answers queued in memory as well as the runs in flight.
// Once nobody can receive a run's answer (the socket closed or began
// closing) the run is cancelled in the pool.
#pragma once

#include <array>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "server/bridge.hpp"
#include "server/rpc.hpp"
#include "server/state.hpp"

namespace corral::server {

namespace http = beast::http;
namespace websocket = beast::websocket;

// SessionStream: the session's transport, a Stream whose WebSocket teardown
// drains. Beast 1.81's own teardown reads at most one chunk after sending a
// close frame and then closes the socket; a caller still sending (the rest
// of an oversized message, say) gets a TCP reset and loses the close frame
// (the npm `ws` client reports 1006). This one shuts the sending side, reads
// and discards until the caller's end of stream or kCloseDrainTimeout, then
// closes.
inline constexpr std::chrono::seconds kCloseDrainTimeout{10};

class SessionStream {
 public:
  using executor_type = Stream::executor_type;
  using next_layer_type = Stream;

  explicit SessionStream(Stream&& stream) : stream_(std::move(stream)) {}

  executor_type get_executor() noexcept { return stream_.get_executor(); }
  Stream& next_layer() noexcept { return stream_; }
  const Stream& next_layer() const noexcept { return stream_; }

  template <class Buffers, class Handler>
  auto async_read_some(const Buffers& buffers, Handler&& handler) {
    return stream_.async_read_some(buffers, std::forward<Handler>(handler));
  }
  template <class Buffers, class Handler>
  auto async_write_some(const Buffers& buffers, Handler&& handler) {
    return stream_.async_write_some(buffers, std::forward<Handler>(handler));
  }
  template <class Buffers>
  std::size_t read_some(const Buffers& buffers, beast::error_code& ec) {
    return stream_.socket().read_some(buffers, ec);
  }
  template <class Buffers>
  std::size_t write_some(const Buffers& buffers, beast::error_code& ec) {
    return stream_.socket().write_some(buffers, ec);
  }

 private:
  Stream stream_;
};

namespace detail {
struct DrainOp {
  Stream& stream;
  std::unique_ptr<std::array<char, 8192>> scratch = std::make_unique<std::array<char, 8192>>();
  bool started = false;

  template <class Self>
  void operator()(Self& self, beast::error_code ec = {}, std::size_t = 0) {
    if (!started) {
      started = true;
      beast::error_code ignored;
      stream.socket().shutdown(Protocol::socket::shutdown_send, ignored);
      stream.expires_after(kCloseDrainTimeout);
    } else if (ec) {
      // End of stream, the drain's timeout or a reset: the close frame went
      // out before; the teardown is done either way.
      beast::error_code ignored;
      stream.socket().close(ignored);
      self.complete(beast::error_code{});
      return;
    }
    stream.async_read_some(asio::buffer(*scratch), std::move(self));
  }
};
}  // namespace detail

// Found by argument-dependent lookup from websocket::stream<SessionStream>.
inline void teardown(beast::role_type, SessionStream& stream, beast::error_code& ec) {
  beast::error_code ignored;
  auto& socket = stream.next_layer().socket();
  socket.shutdown(Protocol::socket::shutdown_both, ignored);
  socket.close(ec);
}

template <class Handler>
auto async_teardown(beast::role_type, SessionStream& stream, Handler&& handler) {
  return asio::async_compose<Handler, void(beast::error_code)>(detail::DrainOp{stream.next_layer()},
                                                               handler, stream.next_layer());
}

class WebSocketSession : public Session,
                         public Caller,
                         public std::enable_shared_from_this<WebSocketSession> {
 public:
  WebSocketSession(std::shared_ptr<ServerState> state, Stream&& stream, std::string identity,
                   std::string remote_address);
  ~WebSocketSession() override;

  // Completes the upgrade `request` asked for (on the session's strand).
  void start(http::request<http::string_body> request);
  // The connection-cap slot (ServerState::admit_connection), held until the
  // session ends.
  void hold(std::shared_ptr<void> slot) { slot_ = std::move(slot); }

  // Session
  void heartbeat() override;
  void shut_down() override;
  void terminate() override;

  // Caller
  void call_tool(std::shared_ptr<Run> run, std::string name, std::string args_json,
                 pool::ToolAnswer answer) override;
  void deliver(std::shared_ptr<Run> run, pool::Outcome outcome) override;

 private:
  struct PendingCall {
    pool::ToolAnswer answer;
    std::string run_key;
  };

  // One outgoing message and the run slot it keeps until it is written.
  struct Outgoing {
    std::string text;
    std::shared_ptr<void> slot;
  };
  // One execute in flight: its run, its pool ticket, its cap slot.
  struct Active {
    std::shared_ptr<Run> run;
    std::optional<pool::Ticket> ticket;
    std::shared_ptr<void> slot;
  };

  void on_accept(beast::error_code ec);
  void do_read();
  void on_read(beast::error_code ec, std::size_t bytes);
  void handle_message(std::string_view text);
  void handle_request(const rpc::Id& id, std::string_view method, const rpc::json::value* params);
  void handle_response(const rpc::Incoming& response);
  void start_execution(const rpc::Id& id, const rpc::json::value* params);
  void finish(const std::shared_ptr<Run>& run, pool::Outcome outcome);
  // A cap slot for one more run, or null with `why` set.
  std::shared_ptr<void> admit_run(std::string& why);
  // Answers `id` with the retryable `busy` envelope.
  void refuse_busy(const rpc::Id& id, std::string message);
  // Options::on_execution for a request answered before it ran.
  void record_refusal(const rpc::Id& id, FailureCode failure);
  // Cancels every run in flight in the pool: nobody can receive its answer.
  void cancel_runs();
  // A message the protocol refuses (binary): reading stops, the socket
  // closes with `code` after the queued writes.
  void refuse_message(websocket::close_code code, std::string reason);

  void send(std::string text, std::shared_ptr<void> slot = nullptr);
  void do_write();
  void on_write(beast::error_code ec, std::size_t bytes);
  // Closes with `code` once every queued message is written.
  void close_after_writes(websocket::close_code code, std::string reason);
  void do_close();
  void on_age_limit(beast::error_code ec);
  // The age limit's bound on waiting for the runs in flight passed.
  void on_age_bound(beast::error_code ec);
  // The connection is over: reject waiting tool calls, leave the registry.
  void end();

  std::shared_ptr<ServerState> state_;
  websocket::stream<SessionStream> ws_;
  std::string identity_;
  std::string remote_address_;
  std::shared_ptr<void> slot_;
  beast::flat_buffer buffer_;
  // Runs holding a slot of this connection's cap (declared before every
  // member that holds a slot, so it outlives them).
  std::size_t runs_held_ = 0;
  std::deque<Outgoing> queue_;
  std::size_t queued_bytes_ = 0;
  bool writing_ = false;
  bool reading_ = false;
  // A refused message ended reading for good.
  bool read_stopped_ = false;
  // Past max_connection_age: no new execute, close once the runs answered.
  bool aged_ = false;
  std::optional<websocket::close_reason> pending_close_;
  bool closing_ = false;
  bool ended_ = false;
  bool counted_ = false;
  bool open_ = false;
  // Heartbeat: set by a pong carrying the payload of our last ping, cleared
  // by each heartbeat. An unsolicited pong (or one echoing anything else)
  // changes nothing.
  bool alive_ = true;
  bool pinging_ = false;
  std::uint64_t ping_salt_ = 0;
  std::uint64_t pings_ = 0;
  std::string ping_payload_;
  asio::steady_timer age_timer_;
  std::map<std::string, Active> runs_;
  std::map<std::string, PendingCall> calls_;
  std::uint64_t next_call_ = 0;
};

}  // namespace corral::server
