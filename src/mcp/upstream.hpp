// src/mcp/upstream.hpp: a small MCP client for upstream servers (stdio
// command or Streamable HTTP URL), enough to list their tools and call them
// on behalf of code mode.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "corral/mcp.hpp"
#include "corral/process.hpp"

namespace corral::mcp {

namespace json = core::json;  // Boost.JSON with corral's writer

// UpstreamTool: one tool an upstream server listed.
struct UpstreamTool {
  std::string name;
  std::string description;
  json::value input_schema;   // null when absent
  json::value output_schema;  // null when absent
  // Its annotations say `destructiveHint: true` (whatever `readOnlyHint`
  // says: a server that claims both is asked about), or `readOnlyHint:
  // false` with no destructiveHint (MCP's default for it is true). Code
  // mode asks the user before running it, as for a destructive bound
  // command. No annotations: not destructive (docs/mcp.md says why).
  bool destructive = false;
};

// UpstreamStatus: what an operator sees of one upstream.
struct UpstreamStatus {
  std::string name;
  std::string transport;                          // "stdio" or "http"
  std::string state = "up";                       // up, restarting (exited; the next attempt is
                                                  // scheduled) or failed (5 attempts in a row
                                                  // failed; still retried every backoff cap)
  int pid = 0;                                    // the server process while up (stdio)
  std::uint64_t restarts = 0;                     // restart attempts, failed ones included
  std::string last_exit;                          // "exit 3", "signal 9", "" when none yet
  std::chrono::steady_clock::time_point since{};  // since when in this state
  std::optional<std::chrono::steady_clock::time_point> next_attempt;
  std::size_t tools = 0;
  // A stdio server's containment unit kind ("cgroup", "pid_namespace",
  // "process_group") and what this host enforces of its profile (as a bound
  // command's Operation::protections); empty for HTTP.
  std::string unit;
  std::vector<process::Protection> protections;
};

// UpstreamClient: one initialized connection. call_tool() may be called
// from any thread and never blocks on the server; `done` runs on a client
// thread with the CallToolResult object, or with nullopt and an error text.
class UpstreamClient {
 public:
  using Done = std::function<void(std::optional<json::object> result, std::string error)>;

  // Connects (spawns the command, or reaches the URL), initializes and
  // lists the tools, all within `timeout`. Throws std::runtime_error naming
  // the upstream and what failed.
  static std::unique_ptr<UpstreamClient> connect(
      const Upstream& upstream, std::chrono::milliseconds timeout, const Logger& logger,
      std::chrono::milliseconds backoff_min = std::chrono::milliseconds(500),
      std::chrono::milliseconds backoff_max = std::chrono::milliseconds(30'000));
  virtual ~UpstreamClient() = default;

  const std::string& name() const noexcept { return name_; }
  const std::vector<UpstreamTool>& tools() const noexcept { return tools_; }
  void set_tools(std::vector<UpstreamTool> tools) { tools_ = std::move(tools); }

  // Returns what cancels the call: it sends notifications/cancelled to the
  // server (the answer, if one still comes, is ignored by the caller).
  virtual std::function<void()> call_tool(const std::string& tool, json::value arguments,
                                          std::chrono::milliseconds timeout, Done done) = 0;
  // A stdio client restarts its server when it exits (Options'
  // restart_backoff_*); calls while it is down fail at once with a text that
  // starts "unavailable:" and says when the next attempt is.
  virtual UpstreamStatus status() const;
  // Fails what is pending, stops the server process (stdio) or ends the
  // session (HTTP). Idempotent.
  virtual void close() = 0;

 protected:
  std::string name_;
  std::vector<UpstreamTool> tools_;
};

// Reads a tools/list page's tools into `out`; returns nextCursor (or empty).
std::string read_tools_page(const json::object& result, std::vector<UpstreamTool>& out);

}  // namespace corral::mcp
