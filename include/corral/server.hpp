// corral/server.hpp: the executor server, embeddable in any C++ program.
//
// A `Server` is one HTTP listener (TCP host:port, or a unix socket path) in
// front of one `pool::WorkerPool`. Plain HTTP requests get the probes
// (`/healthz`, `/readyz`, `/metrics`); executions arrive through a WebSocket
// upgrade at `/` and speak the executor protocol (JSON-RPC 2.0, see
// docs/protocol.md): `protocolVersion`, `execute`, and `tool.call` requests the
// server sends back to the caller while the guest awaits a tool.
//
// The server resolves every bound of a run before the pool sees it (timeout
// clamped between a default and a ceiling, memory and output caps from its
// options), measures each result against `response_limit`, pings its sockets,
// retires connections past `max_connection_age`, and drains on close().
//
// It installs no signal handler, reads no environment variable, registers no
// global logger and opens no second port: every decision is in `Options`.
//
// Example:
//   corral::server::Options options;
//   options.port = 0;  // any free port
//   options.pool.max_workers = 2;
//   options.default_timeout = std::chrono::milliseconds(200);
//   options.max_timeout = std::chrono::milliseconds(500);
//   options.metrics = corral::server::own_metrics();
//   corral::server::Server server(std::move(options));
//   server.listen();                       // throws std::system_error (EADDRINUSE, ...)
//   std::printf("%s\n", server.address().to_string().c_str());  // 127.0.0.1:41234
//   ...
//   server.close();                        // drain, then 1001 on every socket
//
// Thread safety: every member function may be called from any thread, except
// that the destructor must not run on one of the server's own threads (hooks,
// metrics sources and loggers run there).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "corral/log.hpp"
#include "corral/pool.hpp"
#include "corral/sandbox.hpp"

namespace corral::server {

// kProtocolVersion: what `protocolVersion` answers. Clients compare it with
// exact equality and refuse a server that differs (protocol_mismatch).
inline constexpr const char* kProtocolVersion = kExecutorProtocolVersion;  // corral/language.hpp

// kDefaultTimeout: a run's timeout when neither the request nor the server's
// options name one.
inline constexpr std::chrono::milliseconds kDefaultTimeout{30'000};

// kMaxSupportedTimeout: the widest timeout any run may have, whatever the
// operator configured (2^31 - 1 ms, the widest delay a 32-bit millisecond
// timer takes; clients in other languages rely on it).
inline constexpr std::chrono::milliseconds kMaxSupportedTimeout{2'147'483'647};

// kKeepAliveTimeout: an idle HTTP keep-alive connection is closed after 72 s
// (above the 60 s an AWS Application Load Balancer holds one).
// kHeadersTimeout: a request head (a new connection's first one, or one whose
// first byte has arrived) must be complete within 10 s, however slowly its
// bytes drip in.
// kIdleTimeout: reading a request body, or writing a response or the
// upgrade's answer, must be done within 30 s.
inline constexpr std::chrono::milliseconds kKeepAliveTimeout{72'000};
inline constexpr std::chrono::milliseconds kHeadersTimeout{10'000};
inline constexpr std::chrono::milliseconds kIdleTimeout{30'000};
// kMaxConnections: connections open at once, when the options name no cap.
inline constexpr std::size_t kMaxConnections = 1024;
// kMaxWriteQueue: bytes queued for one WebSocket before reading pauses (two
// answers at the default 16 MiB response limit).
inline constexpr std::size_t kMaxWriteQueue = std::size_t{32} << 20;
// kMaxRunsPerConnection / kMaxRunsPerIdentity: runs in flight at once on one
// connection and for one identity, when the options name no cap.
inline constexpr std::size_t kMaxRunsPerConnection = 16;
inline constexpr std::size_t kMaxRunsPerIdentity = 64;

// kPrometheusContentType: the content type of the text exposition format 0.0.4.
inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

// Handshake: what the identity hook sees of an upgrade request.
struct Handshake {
  // Header names in lower case; repeated headers joined with ", ".
  std::map<std::string, std::string> headers;
  // "127.0.0.1", "::1", or "unix" for a unix socket peer.
  std::string remote_address;
};

// Decision: an identity to admit the caller under, or a rejection. The
// reason of a rejection is logged with the remote address and never sent.
struct Decision {
  std::string identity;
  bool reject = false;
  std::string reason;

  static Decision admit(std::string identity) { return {std::move(identity), false, {}}; }
  static Decision refuse(std::string reason) { return {{}, true, std::move(reason)}; }
};

// IdentityHook: decides whether an upgrade may open a session. Call `decide`
// exactly once, now or later, from any thread. The Handshake lives only for
// the hook's call: a hook that decides later copies what it needs. A hook
// that throws, or drops `decide` without calling it, refuses the caller: a
// broken policy admits nobody. Without a hook every caller is "anonymous".
using DecideCallback = std::function<void(Decision)>;
using IdentityHook = std::function<void(const Handshake&, DecideCallback decide)>;

// Wraps a synchronous policy as an IdentityHook.
IdentityHook sync_identity(std::function<Decision(const Handshake&)> policy);

// MetricsSource: what `/metrics` serves. `render` gets this server's own
// instruments already written in the text format (empty when `instrumented`
// is false) and returns the whole scrape; what it throws answers 500
// "metrics unavailable" (and is logged). Runs on a server thread.
struct MetricsSource {
  std::string content_type = kPrometheusContentType;
  std::function<std::string(const std::string& own)> render;
};

// A MetricsSource that serves exactly the server's own instruments.
MetricsSource own_metrics();

// LogLevel / Logger (corral/log.hpp): where the server reports what it
// refused or dropped.
using corral::Logger;
using corral::LogLevel;

// ExecutionRecord: one execute request answered (or refused after it was
// read), for the host's log: who, which, how it ended and what it took.
struct ExecutionRecord {
  std::string identity;                // the identity hook's answer ("anonymous" without one)
  std::string id;                      // the request's JSON-RPC id, as JSON text
  std::string language;                // "javascript", "typescript" or "ruby"; empty if unread
  std::optional<FailureCode> failure;  // nullopt: the run succeeded
  double seconds = 0;                  // request read to answer sent to the writer
  double queue_seconds = 0;            // waited for a worker slot
  double run_seconds = 0;              // inside the worker (Usage::wall_time)
  std::uint64_t tool_calls = 0;
  std::uint64_t output_bytes = 0;    // stdout and stderr the guest wrote
  std::uint64_t response_bytes = 0;  // the result envelope sent back
  std::uint64_t worker = 0;          // the pool's number for the worker; 0: none ran it
  // False for a request answered before it reached the pool (busy,
  // invalid_request): a caller can make those as fast as it can send.
  bool admitted = true;
};

// Options: every field has a default. validate() says which is wrong.
struct Options {
  // TCP host (an address or a name resolved once at listen) and port; port 0
  // asks the kernel for a free one (read it back with address()).
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  // When set, a unix socket at this path replaces host and port. A stale
  // socket file at the path is removed first.
  std::string socket_path;

  // The pool every execution runs in (workers, queue, grace, ...).
  pool::Options pool;

  // A run's timeout when the request names none (capped by max_timeout).
  std::chrono::milliseconds default_timeout = kDefaultTimeout;
  // The ceiling a request may ask for; a request asking for more (or for
  // null, "the widest") gets this. Never above kMaxSupportedTimeout.
  std::chrono::milliseconds max_timeout = kMaxSupportedTimeout;
  // Every other bound of a run (memory, output caps, tool calls, profile);
  // its `timeout` is ignored, the two fields above decide it.
  sandbox::Options run_limits;

  // Largest result envelope, in UTF-8 bytes of its JSON (logs included); a
  // larger result is answered with response_too_large instead.
  std::optional<std::size_t> response_limit;
  // A WebSocket connection older than this takes no new execute (each is
  // answered `busy`, retryable) and closes with 1000 "connection age limit"
  // once its runs in flight have answered, or at the latest when the
  // longest of them passed its timeout plus the pool's grace plus a second
  // (runs still going then are cancelled).
  std::optional<std::chrono::milliseconds> max_connection_age;
  // Every interval each socket that answered the previous ping gets a new
  // one, and each that did not is terminated. Zero or less: no pings.
  std::chrono::milliseconds ping_interval{30'000};
  // See kKeepAliveTimeout / kHeadersTimeout / kIdleTimeout.
  std::chrono::milliseconds keep_alive_timeout = kKeepAliveTimeout;
  std::chrono::milliseconds headers_timeout = kHeadersTimeout;
  std::chrono::milliseconds idle_timeout = kIdleTimeout;
  // Connections open at once (plain HTTP, WebSocket and routes alike), in
  // all and per remote address (every unix socket peer is "unix"); 0: no
  // cap. A connection past a cap is answered `503` (JSON body, Retry-After)
  // and closed, logged, and counted in corral_connection_rejections_total.
  std::size_t max_connections = kMaxConnections;
  std::size_t max_connections_per_address = 0;
  // Largest WebSocket message accepted from a caller; checked from the frame
  // header, before any of it is buffered (the socket closes with 1009).
  std::size_t max_message_size = std::size_t{16} << 20;
  // Bytes queued for one WebSocket (answers, tool calls) above which the
  // server stops reading that socket until the queue drains to it: a caller
  // that stops reading fills its own TCP window and can start no more runs.
  // One message larger than this is still written whole (reading pauses
  // until it is). 0 is refused by validate().
  std::size_t max_write_queue = kMaxWriteQueue;
  // Runs in flight at once on one connection and for one identity (the
  // identity hook's answer; "anonymous" without a hook), counted from the
  // execute's arrival until its answer is written to the socket; 0: no cap.
  // An execute past a cap is answered at once with `busy` (retryable) and
  // nothing runs.
  std::size_t max_runs_per_connection = kMaxRunsPerConnection;
  std::size_t max_runs_per_identity = kMaxRunsPerIdentity;

  // close(): readiness fails at once, new connections are still accepted for
  // shutdown_delay, then the pool gets shutdown_drain to finish its runs.
  std::chrono::milliseconds shutdown_delay{0};
  std::chrono::milliseconds shutdown_drain{10'000};

  // The request guard every HTTP request passes first (probes, upgrades,
  // routes; docs/security.md "Host and Origin"). A request carrying an
  // Origin must name one of `allowed_origins` ("scheme://host[:port]"; "*":
  // any) or an http(s) loopback origin; requests without one (non-browser
  // clients) pass. The Host must be a loopback name or address when the
  // listener is loopback-only, or one of `allowed_hosts` ("name" or
  // "name:port"; "*": any) or the host of an allowed origin. Malformed
  // entries fail validate().
  std::vector<std::string> allowed_origins;
  std::vector<std::string> allowed_hosts;

  IdentityHook identify;
  // Unset: /metrics answers 404.
  std::optional<MetricsSource> metrics;
  // False: no instrument is touched (and the pool counts nothing either).
  bool instrumented = true;
  // Unset: warnings and errors go to stderr.
  Logger logger;
  // Called once per execute request answered, on a server thread; must not
  // throw. Unset: nothing is recorded.
  std::function<void(const ExecutionRecord&)> on_execution;
  // Threads running the server's event loop.
  std::size_t io_threads = 1;
};

// Throws std::invalid_argument naming the first bad option.
void validate(const Options& options);

// Address: where a listening server can be reached.
struct Address {
  std::string address;  // "127.0.0.1", "::1", or the unix socket path
  std::string family;   // "IPv4", "IPv6" or "unix"
  std::uint16_t port = 0;
  // "127.0.0.1:8080", "[::1]:8080", or "unix:/path"
  std::string to_string() const;
};

// Server: see the file comment.
class Server {
 public:
  // Builds the pool (spawning nothing) and validates options (throws
  // std::invalid_argument). Listens nowhere until listen().
  explicit Server(Options options);
  // Closes (with the configured drain) if close() was not called.
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and starts serving. Throws std::system_error carrying the OS error
  // (e.g. std::errc::address_in_use) when the address cannot be bound, and
  // std::logic_error when called twice or after close().
  void listen();
  // The bound address (the real port when 0 was asked). Throws
  // std::logic_error before listen().
  Address address() const;

  // New upgrades are refused with 503 while not accepting; open sessions and
  // running executions are untouched, readiness follows at once.
  void stop_accepting();
  // Throws corral::Error (internal) "A closed server cannot accept
  // connections again." once close() has begun.
  void resume_accepting();
  bool accepting() const noexcept;
  bool draining() const noexcept;

  // Drains and closes: readiness 503 at once; accepting for shutdown_delay;
  // then no more upgrades, no more pings, pool shutdown with shutdown_drain
  // (every run that finishes inside it is delivered, later ones fail with
  // connection_broken), then every socket closes with 1001 "server shutting
  // down" and the listener closes. Memoized: a second call starts nothing and
  // waits for (or calls `done` after) the first. `done` runs on a server
  // thread.
  void close(std::function<void()> done);
  // Blocking form.
  void close();

  // The pool the server runs executions in (subscribe to its events here).
  pool::WorkerPool& pool() noexcept;

  // This server's own instruments in the text format 0.0.4.
  std::string render_metrics() const;

  class Impl;

 private:
  // Mounts plain-HTTP routes before listen() (inside corral only:
  // `corral serve` mounts MCP at /mcp; src/server/route.hpp).
  friend class Routes;
  std::shared_ptr<Impl> impl_;
};

}  // namespace corral::server
