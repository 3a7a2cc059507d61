// corral/mcp.hpp: corral as a Model Context Protocol server.
//
// A `Service` is the tool catalogue every MCP session of one process shares:
//   - `execute`: runs one code-mode function in a `pool::WorkerPool`. Its
//     description carries TypeScript declarations, generated from the JSON
//     schemas, of every tool the code can call as
//     `codemode.<name>(input): Promise<output>`;
//   - bound commands from manifests, published in `direct` mode (one MCP tool
//     per command, with its input schema and annotations) or `compact` mode
//     (`search_tools`, `get_tool_details`, `call_tool`), and callable from
//     code mode as `codemode.<command>(input)`;
//   - the tools of upstream MCP servers (a stdio command or a Streamable HTTP
//     URL), callable from code mode as `codemode.<server>.<tool>(input)`.
// Sessions speak MCP revisions 2025-11-25 and 2025-06-18 (and 2025-03-26)
// over stdio (`serve_stdio`) or Streamable HTTP (src/mcp/http.hpp, mounted at
// `/mcp` by `corral serve`). Protocol details: docs/mcp.md.
//
// Example:
//   corral::pool::WorkerPool pool;
//   corral::mcp::Options options;
//   options.manifests = {"examples/git.yaml"};
//   auto service = corral::mcp::Service::start(std::move(options), pool);  // throws on bad config
//   return corral::mcp::serve_stdio(*service, 0, 1);                      // until stdin closes
//
// Thread safety: a Service is immutable after start() and may be shared by any
// number of sessions on any threads. Its destructor cancels what still runs
// and waits for it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "corral/bind.hpp"
#include "corral/log.hpp"
#include "corral/pool.hpp"
#include "corral/sandbox.hpp"

namespace corral::mcp {

// Mode: how bound commands are published as MCP tools.
//   direct:  one tool per command (name, input schema, annotations);
//   compact: three tools (search_tools, get_tool_details, call_tool),
//            whatever the number of commands; `execute`'s description
//            leaves the declarations out and code finds them with
//            codemode.search(query) and codemode.describe(name).
enum class Mode { direct, compact };

// Upstream: an MCP server whose tools code mode can call. Exactly one of
// `command` (argv of a stdio server) and `url` (a Streamable HTTP endpoint,
// http:// only) is set. `name` is a JavaScript identifier: the tools are
// `codemode.<name>.<tool>`.
struct Upstream {
  std::string name;
  std::vector<std::string> command;
  std::string url;
  std::map<std::string, std::string> headers;  // sent with every HTTP request
  // A stdio server's environment, deny by default: exactly the variables of
  // this process named in `env_allow` (absent ones skipped) plus `env_set`,
  // with PATH defaulting to /usr/local/bin:/usr/bin:/bin when neither names
  // it. Never any CORRAL_* variable (parse_upstreams refuses one).
  std::vector<std::string> env_allow;
  std::map<std::string, std::string> env_set;
  // What a stdio server can reach besides its environment, deny by default:
  // the bound commands' confined profile (user namespace mapping it to uid
  // 65534 when corral is root, no capabilities, no_new_privs, seccomp, pid,
  // network and mount namespaces, the limits; docs/commands.md). It runs in
  // a containment unit of its own (cgroup leaf, else pid namespace, else
  // process group) that closing the upstream, a restart or corral's death
  // empties. Confinement::none() is the host profile.
  process::Confinement confinement;
};

// Parses the upstream setting: a JSON object
// {"NAME": {"command": ["argv", ...], "env": {"allow": [..], "set": {..}},
//           "confinement": "confined" | "host" | {..manifest fields..}}
//        | {"url": "http://..", "headers": {..}}}
// (or the path of a file holding one). Strict: unknown keys, wrong types,
// relative bind paths and a key given twice are refused. Throws
// std::invalid_argument naming the bad entry and field.
std::vector<Upstream> parse_upstreams(const std::string& text);

// LogLevel / Logger (corral/log.hpp): what the host logs (never stdout in
// stdio mode).
using corral::Logger;
using corral::LogLevel;

// Options: every field has a default.
struct Options {
  std::vector<std::string> manifests;  // manifest files (docs/commands.md)
  // Command trees bound like manifests: an embedder's own CLI11 app
  // (`bind::tree_from_cli11`) or a tree built in code.
  std::vector<bind::CommandTree> trees;
  Mode mode = Mode::direct;
  std::vector<Upstream> upstreams;
  // Code mode asks the client's user (MCP elicitation) before it runs a
  // command annotated `destructiveHint: true`, and before any function named
  // here (a command tool's name, `server.tool` for an upstream tool); a
  // client without elicitation gets a refusal. A direct tool call is the
  // client's own to approve.
  std::vector<std::string> approve;
  // Bytes of a tool result's text (value, stdout and stderr together); a
  // larger result is cut structurally (arrays and objects lose their tail,
  // strings are shortened) and says so.
  std::size_t result_budget = std::size_t{64} << 10;
  // What a cut drops is kept whole as MCP resources (resource_link blocks in
  // the result, resources/read by the session that made them): this many
  // bytes at most across every session (the oldest go first; 0 keeps
  // nothing), each for this long.
  std::size_t result_retention_bytes = std::size_t{64} << 20;
  std::chrono::milliseconds result_retention{600'000};
  // A code-mode run's timeout when the call names none, and the ceiling a
  // call may ask for.
  std::chrono::milliseconds default_timeout{30'000};
  std::chrono::milliseconds max_timeout{300'000};
  // Every other bound of a run (memory, output caps, tool calls, profile).
  sandbox::Options run_limits;
  // Tools per tools/list page.
  std::size_t page_size = 100;
  // A call whose client sent a progress token gets a progress notification
  // this often while it runs (besides one per code-mode tool call).
  std::chrono::milliseconds progress_interval{5'000};
  // How long connecting to an upstream server (spawn + initialize + list)
  // may take.
  std::chrono::milliseconds upstream_timeout{30'000};
  Logger logger;  // unset: warnings and errors go to stderr
  // A stdio upstream that exits is restarted after a delay that starts at
  // restart_backoff_min and doubles per failed attempt up to
  // restart_backoff_max (reset once a restart initializes and lists tools).
  std::chrono::milliseconds restart_backoff_min{500};
  std::chrono::milliseconds restart_backoff_max{30'000};
};

// Throws std::invalid_argument naming the first bad option.
void validate(const Options& options);

class Service {
 public:
  // Binds every manifest and connects to every upstream (listing its
  // tools). Throws std::invalid_argument for a bad manifest, a tool name
  // collision or bad options, and std::runtime_error for an upstream that
  // cannot be reached. `pool` must outlive the service.
  static std::shared_ptr<Service> start(Options options, pool::WorkerPool& pool);
  ~Service();

  // Cancels everything still running (runs, commands, upstream calls) and
  // waits for it; later tool calls fail with `unavailable`. Idempotent.
  void shutdown();

  // The names of the tools tools/list publishes, in order.
  std::vector<std::string> tool_names() const;
  // The TypeScript declarations included in execute's description.
  std::string declarations() const;

  // For operators (the daemon's /__status__, `corral status`): a JSON object
  // {"commands": [per binding: name, unit, slots, running, cleanup_failed,
  //   runs_started, runs_failed, failures {code: n}, slot_status [{slot,
  //   state, pid, program, unit, since (RFC 3339), since_seconds}]],
  //  "upstreams": [{name, transport, state up|restarting|failed, pid,
  //   restarts, last_exit, since, since_seconds, next_attempt?, tools,
  //   and for stdio unit, protections [{name, enforced, detail}]}],
  //  "kept_results": {bytes, max_bytes, retention_seconds} (what cuts
  //   dropped, kept as resources)}.
  // Cheap: no syscalls beyond the clock. docs/operations.md.
  std::string status_json() const;
  // The same in Prometheus text format (corral_command_*, corral_mcp_execution* and
  // corral_upstream_* families; labels: binding, code, state, upstream).
  std::string metrics() const;

  class Impl;

 private:
  // The transports' sessions (src/mcp/session.cc) reach the service's
  // internals; nothing outside the layer does.
  friend class Session;
  Impl& impl() noexcept { return *impl_; }
  explicit Service(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Serves one MCP session over newline-delimited JSON-RPC on `in_fd` and
// `out_fd` until `in_fd` reaches end of file. Only protocol messages are
// written to `out_fd`. Returns 0, or 1 when `out_fd` broke.
int serve_stdio(Service& service, int in_fd, int out_fd);

}  // namespace corral::mcp
