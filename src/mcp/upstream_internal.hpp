// src/mcp/upstream_internal.hpp: what the upstream client's files share (a
// private header): the MCP client's handshake and message helpers, the stdio
// connection (StdioUpstream), and the constructors of the two transports that
// UpstreamClient::connect chooses between.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "mcp/server_process.hpp"
#include "mcp/upstream.hpp"

namespace corral::mcp::upstream_detail {

inline constexpr const char* kClientRevision = "2025-06-18";

json::object initialize_params();

// An upstream's message as JSON. Bytes that are not UTF-8 become U+FFFD first
// (core/utf8.hpp), so that one bad byte costs a character, not the answer;
// `replaced` says whether any did.
json::value parse_upstream(std::string text, boost::system::error_code& ec, bool& replaced);

std::string error_text(const json::object& message);

// StdioUpstream: a child process speaking MCP on its stdin and stdout
// (upstream_stdio.cc).
class StdioUpstream : public UpstreamClient {
 public:
  using Reply = std::function<void(std::optional<json::object> message, std::string error)>;

  // Starts the server (confined, in a unit of its own: server_process.hpp)
  // from the calling thread, whose exit kills the server's init (its
  // parent-death signal follows the thread that cloned it): a thread that
  // outlives the server. Throws what failed to start.
  StdioUpstream(const Upstream& upstream, std::shared_ptr<ServerContainment> containment,
                Logger logger, std::function<void()> on_end = {});

  ~StdioUpstream() override { close(); }

  // Sends a request; `reply` runs once: with the answer, or with nullopt
  // when the server ends, when `deadline` passes first (the reader expires
  // it and tells the server notifications/cancelled), or when forget(id)
  // drops it. Returns the id (0 when the server has already ended).
  std::int64_t request(const std::string& method, json::object params, Reply reply,
                       std::chrono::steady_clock::time_point deadline =
                           std::chrono::steady_clock::time_point::max());
  // Drops a pending request (its reply runs with nullopt and `why`) and
  // tells the server notifications/cancelled. False if it already ended.
  bool forget(std::int64_t id, const std::string& why);

  // Blocking request with a deadline (connect only).
  json::object request_sync(const std::string& method, json::object params,
                            std::chrono::steady_clock::time_point deadline);

  void notify(const std::string& method);

  std::function<void()> call_tool(const std::string& tool, json::value arguments,
                                  std::chrono::milliseconds, Done done) override;

  void close() override;

  int pid() const noexcept { return pid_.load(); }
  bool ended();
  // How the process ended, once close() reaped it ("exit 0", "signal 15").
  std::string exit_text();

 private:
  // One message (core/jsonrpc.hpp's builders), one line.
  void write(std::string message);

  // The reader's thread: nothing may leave it (a throw would be
  // std::terminate); whatever ends it, the calls still waiting are failed.
  void read_loop() noexcept;

  void log_quietly(const std::string& message) noexcept;

  void read_lines();

  void on_line(const std::string& line);

  void fail_pending(const std::string& why);
  // Expires the requests whose deadline passed; returns how long the reader
  // may wait for the next one (-1: none has a deadline), in poll's ms.
  int expire_overdue();
  // An eventfd the reader polls besides the server's stdout: a request with
  // an earlier deadline than the reader sleeps towards wakes it.
  void wake_reader();
  void drain_wakes();

  Logger logger_;
  std::function<void()> on_end_;
  std::string exit_;
  std::unique_ptr<ServerProcess> process_;
  std::atomic<pid_t> pid_{0};
  int to_child_ = -1;
  int from_child_ = -1;
  int stop_[2] = {-1, -1};
  int wake_ = -1;
  std::thread reader_;
  std::mutex mutex_;
  std::mutex write_mutex_;
  std::mutex close_mutex_;
  bool closed_ = false;
  bool ended_ = false;
  std::int64_t next_id_ = 0;
  struct Pending {
    std::string method;
    Reply reply;
    std::chrono::steady_clock::time_point deadline;
  };
  std::map<std::int64_t, Pending> pending_;
};

// A Streamable HTTP upstream (HttpUpstream, upstream_http.cc), initialized
// and its tools listed within `timeout`. Throws what failed.
std::unique_ptr<UpstreamClient> connect_http(const Upstream& upstream,
                                             std::chrono::milliseconds timeout);

// A stdio upstream kept running (RestartingUpstream, upstream_restarting.cc):
// returns once its first start is up, or throws what failed.
std::unique_ptr<UpstreamClient> start_restarting(const Upstream& upstream,
                                                 std::chrono::milliseconds timeout,
                                                 const Logger& logger,
                                                 std::chrono::milliseconds backoff_min,
                                                 std::chrono::milliseconds backoff_max);

}  // namespace corral::mcp::upstream_detail
