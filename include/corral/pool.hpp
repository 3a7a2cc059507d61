// corral/pool.hpp: run sandboxes in hardened worker processes.
//
// A `WorkerPool` hands each execution to a `corral worker` process: a
// separate, locked-down process (seccomp allow-list, no_new_privs, rlimits,
// namespaces where the kernel allows) that runs the JavaScript sandbox. The
// process that owns the pool never initialises V8. Workers are spawned on
// demand, reused, retired after a number of runs or past a memory bound, and
// replaced; a worker that dies mid-run fails only that run, with
// `connection_broken` (retryable).
//
// Tool calls the guest makes travel worker -> pool -> the request's
// Dispatcher, and the answer travels back while the guest awaits it.
//
// Example:
//   corral::pool::WorkerPool pool({.worker_command = {"/usr/bin/corral", "worker"}});
//   corral::pool::Request request;
//   request.code = "async () => (await codemode.add({a: 1, b: 2})).sum";
//   request.tools = {"add"};
//   request.dispatcher = [](const std::string& name, std::string args,
//                           corral::pool::ToolAnswer answer) {
//     answer.resolve(R"({"sum":3})");
//   };
//   corral::pool::Outcome outcome = pool.execute(std::move(request));
//   outcome.execution().value();  // "3"
//
// Thread safety: every member function may be called from any thread.
// Dispatchers, completions and listeners run on the pool's own thread and
// must not block it (answer a slow tool later, from any thread).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "corral/execution.hpp"
#include "corral/failure.hpp"
#include "corral/outcome.hpp"
#include "corral/sandbox.hpp"

namespace corral::pool {

// ToolAnswer: the one answer to one guest tool call. Copyable; every copy
// refers to the same call. Thread-safe; the first answer wins. Returns false
// when the call was already answered or its execution already settled (the
// answer is then dropped).
class ToolAnswer {
 public:
  struct State;
  explicit ToolAnswer(std::shared_ptr<State> state) : state_(std::move(state)) {}
  // Fulfils the guest's promise with `json` (one JSON document).
  bool resolve(std::string json) const;
  // Rejects the guest's promise with an Error whose message is `message`.
  bool reject(std::string message) const;

 private:
  std::shared_ptr<State> state_;
};

// Dispatcher: called on the pool's thread for each tool call of one
// execution; `name` is the tool's name as listed in Request::tools. Answer
// through `answer`, now or later, from any thread. An exception thrown here
// becomes a tool error inside the guest, never the end of the run. Never
// called after the execution settled.
using Dispatcher =
    std::function<void(const std::string& name, std::string args_json, ToolAnswer answer)>;

// Request: one execution, with its bounds already resolved by the caller.
struct Request {
  enum class Shape {
    execute,  // code-mode shapes: `async () => {...}`, a body, an expression
    eval,     // a classic script; the completion value is the result
  };
  Shape shape = Shape::execute;
  std::string code;
  // Tool names the guest may call as `codemode.<name>(input)`; a name may be
  // dotted ("github.search" is `codemode.github.search`).
  std::vector<std::string> tools;
  // timeout, memory_limit, output caps, max_tool_calls, profile, and the
  // guest language (limits.language: Ruby guests call a tool "math.add" as
  // Codemode::Math.add(input); docs/ruby.md). The pool also kills a worker
  // that has not answered within timeout + grace.
  sandbox::Options limits;
  // Answers tool calls; empty means every call fails with tool_error.
  Dispatcher dispatcher;
  // Called on the pool's thread when the run is handed to a worker: the
  // pool's number for the worker and how long the run waited since submit.
  // Again if its worker died before starting it and it waited once more.
  // Must not throw. Empty: nothing is called.
  std::function<void(std::uint64_t worker, std::chrono::duration<double> waited)> on_start;
};

// How a run ended: exactly one of an Execution and a Failure.
using Outcome = corral::Outcome;

using Completion = std::function<void(Outcome)>;

// Why a worker process ended.
enum class WorkerExit {
  retired,         // reached its retirement count (or made way for its successor)
  memory_bound,    // its RSS passed worker_memory_bound
  crashed,         // died on its own (signal, abort, exit) while in use or idle
  hung,            // missed a run's timeout + grace and was killed
  protocol_error,  // sent a malformed or oversized frame and was killed
  start_failed,    // could not be spawned or never became ready
  shutdown,        // the pool shut down
};
inline constexpr int kWorkerExitCount = static_cast<int>(WorkerExit::shutdown) + 1;
std::string_view to_string(WorkerExit exit) noexcept;

// Why a request was refused before it ran.
enum class Rejection {
  queue_overflow,  // every slot busy and the queue full (queue_overflow)
  shutting_down,   // the pool is shutting down (unavailable)
};
inline constexpr int kRejectionCount = static_cast<int>(Rejection::shutting_down) + 1;
std::string_view to_string(Rejection rejection) noexcept;

// Stats: a consistent snapshot of the pool's gauges and counters.
struct Stats {
  std::size_t workers_live = 0;        // spawned and not yet reaped
  std::size_t executions_running = 0;  // handed to a worker, not settled
  std::size_t queue_depth = 0;         // waiting for a slot
  std::array<std::uint64_t, kRejectionCount> rejections{};
  // Settled executions by outcome: index 0 is "ok", index 1 + code is that
  // FailureCode.
  std::array<std::uint64_t, kFailureCodeCount + 1> executions{};
  std::array<std::uint64_t, kWorkerExitCount> worker_exits{};
  std::uint64_t workers_started = 0;
  std::uint64_t tool_calls = 0;
};

// Event: what listeners hear, as it happens, on the pool's thread.
struct Event {
  enum class Kind {
    worker_started,      // worker, pid
    worker_exited,       // worker, pid, exit
    execution_started,   // worker, ticket, pid, duration (how long it waited for a slot)
    execution_finished,  // worker, outcome (nullopt = ok), duration
    queued,
    rejected,  // rejection
    tool_call,
  };
  Kind kind = Kind::queued;
  std::uint64_t worker = 0;  // the pool's number for the worker (1, 2, ...)
  std::uint64_t ticket = 0;  // execution_started: the run's Ticket (submit's answer)
  int pid = 0;
  std::optional<WorkerExit> exit{};
  std::optional<FailureCode> outcome{};
  std::optional<Rejection> rejection{};
  std::chrono::duration<double> duration{0};
};
using Listener = std::function<void(const Event&)>;

// Options: every field has a default; see docs/pool.md.
struct Options {
  // argv of a worker: the `corral` binary and "worker". Empty means this
  // process's own executable (/proc/self/exe) with "worker".
  std::vector<std::string> worker_command;
  // Workers in service (taking runs) at once; 0 means the number of cores.
  // Standbys and retiring workers may bring the live ones up to twice this.
  std::size_t max_workers = 0;
  // Concurrent runs inside one worker (one thread and isolate each).
  std::size_t executions_per_worker = 1;
  // Requests that may wait for a slot; past it, queue_overflow.
  std::size_t max_queue = 100;
  // Runs after which a worker is retired and replaced, whatever its memory:
  // each worker retires between 90% and 100% of it (spread, so they don't
  // retire together), and from 20 on its successor is started ahead
  // (docs/pool.md). A backstop: workers are mostly retired by growth.
  std::uint64_t retire_after_executions = 10'000;
  // A worker whose private resident memory after a run is more than this
  // above the least it held after any earlier run is retired: what runs
  // leave behind (heap the engine keeps, fragmentation, a leak) is given
  // back, while a worker that holds steady (about 35 MiB through thousands
  // of runs) is not replaced for nothing. 0: never by growth.
  std::uint64_t retire_on_growth = std::uint64_t{64} << 20;
  // A worker whose resident memory passes this after a run is retired.
  std::uint64_t worker_memory_bound = std::uint64_t{512} << 20;
  // While runs are in flight the pool reads each worker's private resident
  // memory this often. A worker past what it held before its runs plus
  // their memory_limits plus run_memory_overhead has its runs stopped:
  // they end as memory_limit (with their output, if the worker answers
  // within memory_stop_grace; otherwise it is killed) and it retires.
  // Runs with no memory_limit are bounded only by the worker's kernel
  // ceiling (docs/pool.md).
  std::chrono::milliseconds memory_watch_interval{20};
  std::uint64_t run_memory_overhead = std::uint64_t{128} << 20;
  std::chrono::milliseconds memory_stop_grace{100};
  // The kernel's bound on each worker's private writable memory
  // (RLIMIT_DATA, set before the worker starts V8): what no run, and no
  // compromised worker, can pass. A worker whose engine runs out of memory
  // at it ends its runs as memory_limit. It should leave room for several
  // runs' limits and the engine (a worker holds about 40 MiB idle). 0: none.
  std::uint64_t worker_memory_ceiling = std::uint64_t{4} << 30;
  // Added to a run's timeout before the pool kills a silent worker.
  // 250 ms: a worker under 3x CPU overcommit answered a stopped run at most
  // 93 ms past its timeout (bench BM_TimeoutLateness, BENCHMARKS.md).
  std::chrono::milliseconds grace{250};
  // Between SIGTERM and SIGKILL when workers are stopped.
  std::chrono::milliseconds termination_delay{1000};
  // A worker that has not said it is ready within this is killed.
  std::chrono::milliseconds start_timeout{10'000};
  // Where a worker's stderr goes (V8's fatal messages, sanitizer reports, a
  // lockdown failure): the worker writes into a pipe the pool reads, one
  // call per line, cut at 4 KiB, and at most worker_stderr_limit bytes per
  // worker (then one line says the rest is dropped), so no worker, however
  // compromised, can flood or forge the host's own log. Empty: each line
  // goes to this process's stderr as "corral worker N: line".
  std::function<void(std::uint64_t worker, int pid, std::string_view line)> worker_stderr = {};
  std::uint64_t worker_stderr_limit = std::uint64_t{1} << 20;
  // Largest IPC frame either side may send: a run over it fails
  // invalid_request at admission, a tool answer over it reaches the guest
  // as a tool error, a result over it is response_too_large.
  std::size_t max_frame = std::size_t{64} << 20;
  // False skips the worker's lockdown (seccomp, namespaces): for debugging
  // only; `corral check` reports what is active.
  bool harden_workers = true;
  // False makes events free: listeners hear nothing. stats() is always
  // kept (a few counters under one mutex), so an operator's status reads
  // true numbers even when nothing is exported.
  bool instrumented = true;
};

// Throws std::invalid_argument naming the first bad option.
void validate(const Options& options);

// Ticket: names a submitted request, for cancel().
using Ticket = std::uint64_t;

class WorkerPool {
 public:
  // Spawns nothing: workers start on the first request.
  explicit WorkerPool(Options options = {});
  // Shuts down with no drain if shutdown() was not called, then joins the
  // pool's thread. That thread may still be returning from a completion or
  // a shutdown `done` callback after it signalled you: such a callback must
  // never hold the last owner of the pool, and whatever it touches must
  // outlive the pool (destroy the pool first).
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `request`; `done` is called exactly once with the outcome, on the
  // pool's thread (possibly before submit returns, for a refusal).
  Ticket submit(Request request, Completion done);
  // Blocking form of submit.
  Outcome execute(Request request);
  // Stops a queued or running request with `cancelled`; false if it already
  // settled or is unknown.
  bool cancel(Ticket ticket);

  // Refuses queued requests at once (unavailable), waits up to `drain` for
  // running executions, then SIGTERMs every worker and SIGKILLs after
  // termination_delay; runs still going fail with connection_broken. Calls
  // `done` (on the pool's thread) once every worker is reaped. Idempotent:
  // later calls wait for the first shutdown.
  void shutdown(std::chrono::milliseconds drain, std::function<void()> done);
  // Blocking form.
  void shutdown(std::chrono::milliseconds drain);

  Stats stats() const;
  const Options& options() const noexcept;

  // Listeners hear every event from now on; returns an id for unsubscribe.
  std::uint64_t subscribe(Listener listener);
  void unsubscribe(std::uint64_t id);

  class Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace corral::pool
