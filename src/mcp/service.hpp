// src/mcp/service.hpp: the tool catalogue a Service holds and how one tool
// call runs (code mode in the pool, bound commands under their supervisor,
// upstream tools through their client). No transport here: session.hpp
// turns JSON-RPC messages into calls of `Service::Impl`.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/json.hpp"
#include "corral/bind.hpp"
#include "corral/mcp.hpp"
#include "corral/pool.hpp"
#include "corral/process.hpp"
#include "mcp/finder.hpp"
#include "mcp/result_store.hpp"
#include "mcp/results.hpp"
#include "mcp/upstream.hpp"

namespace corral::mcp {

namespace json = core::json;  // Boost.JSON with corral's writer

// CallContext: what a running tool call may do besides answering: report
// progress and log to the client, and learn that it was cancelled.
class CallContext {
 public:
  virtual ~CallContext() = default;
  // Sends a progress notification when the client asked for them.
  virtual void progress(const std::string& message) = 0;
  // Sends a log notification when the client's level lets it through.
  virtual void log(LogLevel level, const std::string& message) = 0;
  // Registers what stops the call; runs it at once when already cancelled.
  // Returns an id for forget().
  virtual std::uint64_t on_cancel(std::function<void()> stop) = 0;
  virtual void forget(std::uint64_t id) = 0;
  virtual bool cancelled() const = 0;
  // Keeps the parts a result's cuts dropped for the session (mcp::Keep);
  // for each, the block that points at it (a resource_link, or a text note
  // for clients older than 2025-06-18), or nothing when it was not kept.
  virtual std::vector<std::optional<json::object>> keep(std::vector<ResultStore::Text> parts) = 0;
  // Whether the client declared the elicitation capability (it can be asked).
  virtual bool can_elicit() const = 0;
  // Asks the client (`elicitation/create`, related to this call) for the
  // user's approval with `message`; `done` gets its action ("accept",
  // "decline", "cancel"), or "error: ..." when the client answered with an
  // error or the session ended, exactly once unless the returned function
  // (which drops the question) ran first.
  virtual std::function<void()> elicit(std::string message,
                                       std::function<void(std::string action)> done) = 0;
};

// Tool: one MCP tool as tools/list publishes it.
struct Tool {
  std::string name;
  json::object definition;  // name, title?, description, inputSchema, outputSchema?, annotations?
};

// Callable: one function code mode can call (`codemode.<path>`).
struct Callable {
  std::string path;  // dotted, each segment a JS identifier
  std::string description;
  json::value input_schema;
  json::value output_schema;
  // A bound command...
  bind::Binding* binding = nullptr;
  std::string operation;
  // ... or an upstream tool.
  UpstreamClient* upstream = nullptr;
  std::string upstream_tool;
  // Code mode asks the user first (Options::approve, or a command annotated
  // destructive).
  bool needs_approval = false;
};

// Tasks: threads for blocking work (a bound command runs on the caller's
// thread); the destructor waits for every one. A task is a thread boundary:
// an exception that leaves `fn` is given to `escaped` (a log line; stderr when
// none is given), never to std::terminate; the task itself answers its call before anything can
// throw (Service::Impl::deliver), so this is the last net, not the answer.
class Tasks {
 public:
  explicit Tasks(std::function<void(const std::string&)> escaped = {})
      : escaped_(std::move(escaped)) {}
  ~Tasks();
  void spawn(std::function<void()> fn);
  void wait_idle();

 private:
  std::function<void(const std::string&)> escaped_;
  std::mutex mutex_;
  std::condition_variable idle_;
  std::size_t active_ = 0;
};

using ResultDone = std::function<void(json::object result)>;

// RunScope: what one code-mode run shares with its guest's tool calls: the
// commands and upstream calls it started are cancelled when the run settles
// or is cancelled.
struct RunScope {
  std::mutex mutex;
  bool settled = false;
  std::vector<std::function<void()>> stops;  // commands and upstream calls
  // Approval questions this run asked, and whether the user turned one down
  // (then later calls are refused without asking again).
  int questions = 0;
  bool declined = false;
  // False (and nothing kept) once the run settled.
  bool track(std::function<void()> stop);
  void settle();
};

class Service::Impl {
 public:
  Impl(Options options, pool::WorkerPool& pool);
  ~Impl();

  void start();  // binds manifests, connects upstreams, builds the catalogue
  void shutdown();

  const std::vector<Tool>& tools() const noexcept { return tools_; }
  const Tool* find_tool(std::string_view name) const noexcept;
  const std::string& declarations() const noexcept { return declarations_; }
  const Options& options() const noexcept { return options_; }
  ResultStore& results() noexcept { return results_; }
  void log(LogLevel level, const std::string& message) const;
  json::object status() const;  // Service::status_json
  std::string metrics() const;  // Service::metrics

  // Runs tool `name` (which find_tool() knows) with `arguments`; `done` gets
  // the CallToolResult exactly once, on some thread (an `internal` failure if
  // anything on the way threw).
  void call(const Tool& tool, const json::object& arguments, std::shared_ptr<CallContext> context,
            ResultDone done);

 private:
  void start_call(const Tool& tool, const json::object& arguments,
                  std::shared_ptr<CallContext> context, ResultDone done);
  void bind_manifests();
  void connect_upstreams();

  // catalogue.cc
  void build_catalogue();
  std::set<std::string> add_command_callables();  // their paths
  void add_upstream_callables(const std::set<std::string>& command_paths);
  void check_approvals() const;  // every Options::approve name is a callable
  void declare_callables();      // the paths each language binds, the declarations
  // Compact mode: codemode.search and codemode.describe, bound beside the
  // callables (a callable of either name is refused).
  void add_finder(std::vector<DeclaredTool> declared);
  std::string execute_description() const;
  std::string compact_preamble() const;  // what compact mode says instead of the declarations
  void publish_tools();
  void search_tools(const json::object& arguments, ResultDone done) const;
  void tool_details(const json::object& arguments, ResultDone done) const;

  // execute_tool.cc
  void run_execute(const json::object& arguments, std::shared_ptr<CallContext> context,
                   ResultDone done);
  // A settled run: its scope's calls stopped, counted, logged, its result.
  json::object settle_execute(std::uint64_t id, std::chrono::steady_clock::time_point started,
                              RunScope& scope, CallContext& context, const pool::Outcome& outcome);
  // A guest's `codemode.<path>(input)`.
  void dispatch(const std::string& path, std::string args_json, pool::ToolAnswer answer,
                const std::shared_ptr<RunScope>& scope,
                const std::shared_ptr<CallContext>& context);
  // Runs the callable (a command on a task, an upstream call).
  void run_callable(const Callable& callable, std::string args_json, pool::ToolAnswer answer,
                    const std::shared_ptr<RunScope>& scope);
  // Asks the user (elicitation) whether the callable may run, then runs it
  // or rejects the guest's call.
  void approve_then_run(const Callable& callable, std::string args_json, pool::ToolAnswer answer,
                        const std::shared_ptr<RunScope>& scope,
                        const std::shared_ptr<CallContext>& context);
  void spawn_command(bind::Binding* binding, const std::string& operation, std::string args_json,
                     pool::ToolAnswer answer, process::CancelSource cancel);
  void dispatch_upstream(const Callable& callable, std::string args_json, pool::ToolAnswer answer,
                         const std::shared_ptr<RunScope>& scope);

  // Hands `done` what `make` builds, once. At every thread boundary of a call
  // (a task, the pool's completion, an upstream's answer): an exception from
  // `make` becomes an `internal` failure for this call and a log line naming
  // `what`; one from `done` (the session's writer) a log line. Never throws.
  void deliver(const ResultDone& done, const std::function<json::object()>& make,
               std::string_view what) const noexcept;
  json::object internal_result() const;

  // command_tools.cc
  void call_tool(const json::object& arguments, std::shared_ptr<CallContext> context,
                 ResultDone done);  // the compact mode's
  void run_command(const std::string& name, const json::object& input,
                   std::shared_ptr<CallContext> context, ResultDone done);
  // The answers that refuse a call: invalid_request, no_such_tool.
  json::object refusal(std::string message) const;
  json::object no_such_command(const std::string& name) const;

  Options options_;
  pool::WorkerPool& pool_;
  ResultStore results_;  // what cuts dropped, per session
  std::vector<std::unique_ptr<bind::Binding>> bindings_;
  std::vector<std::string> binding_names_;  // the tree's root name, per binding
  // Calls of each binding's commands (MCP tools and code mode) by outcome:
  // [0] ok, [1 + code] each failure code.
  struct Outcomes {
    std::array<std::atomic<std::uint64_t>, kFailureCodeCount + 1> counts{};
  };
  std::map<const bind::Binding*, std::unique_ptr<Outcomes>> outcomes_;
  // Code-mode runs (the execute tool) by outcome, and their seconds.
  Outcomes executions_;
  std::atomic<std::uint64_t> execution_micros_{0};
  void count(const bind::Binding* binding, std::optional<FailureCode> outcome) noexcept;
  std::map<std::string, std::pair<bind::Binding*, const bind::Operation*>> commands_;
  std::vector<std::unique_ptr<UpstreamClient>> upstreams_;
  std::vector<Callable> callables_;
  std::vector<std::string> callable_paths_;
  // The callables a Ruby guest can reach (as Codemode constants), and the
  // ones it cannot spell, which its runs leave out.
  std::vector<std::string> ruby_paths_;
  std::vector<std::string> ruby_unreachable_;
  std::vector<Tool> tools_;
  std::string declarations_;
  std::unique_ptr<const Finder> finder_;  // compact mode with callables only
  std::atomic<bool> shut_down_{false};
  // Runs in the pool, by our number: their tickets (0 until submit returned).
  std::mutex runs_mutex_;
  std::condition_variable runs_done_;
  std::map<std::uint64_t, pool::Ticket> runs_;
  std::uint64_t next_run_ = 0;
  Tasks tasks_{[this](const std::string& message) { log(LogLevel::error, message); }};
  // Progress for long calls: one thread ticks every progress_interval.
  void tick_loop();
  std::mutex tick_mutex_;
  std::condition_variable tick_wake_;
  bool ticking_ = false;
  std::vector<std::pair<std::weak_ptr<CallContext>, std::chrono::steady_clock::time_point>> live_;
  std::thread ticker_;
};

}  // namespace corral::mcp
