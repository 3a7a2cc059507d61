// src/server/bridge.hpp: one execution's bridge between the pool and the
// caller's socket.
//
// The pool calls the dispatcher on its own thread for each guest tool call;
// the bridge forwards it to the Caller (the WebSocket session), which sends
// `tool.call` to the client and answers the ToolAnswer when the client does.
// Two guards sit on that path:
//   - `settled` flips before the outcome is handed on, so a call that races
//     the end of the run gets the pinned "Execution has already completed."
//     and never reaches a caller that forgot the run;
//   - a caller that is gone (socket closed) answers the guest with an error,
//     and the run goes on.
#pragma once

#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "corral/pool.hpp"
#include "server/rpc.hpp"

namespace corral::server {

struct Run;

// Caller: where a run's tool calls and outcome go (a WebSocket session).
class Caller {
 public:
  virtual ~Caller() = default;
  // Any thread. Sends the call and answers `answer` when the caller does.
  virtual void call_tool(std::shared_ptr<Run> run, std::string name, std::string args_json,
                         pool::ToolAnswer answer) = 0;
  // Any thread. The run settled.
  virtual void deliver(std::shared_ptr<Run> run, pool::Outcome outcome) = 0;
};

// Run: one execute request in flight.
struct Run {
  rpc::Id id;       // the execute request's id, its bytes as received
  std::string key;  // id.text(): the session's map key
  std::chrono::milliseconds timeout{0};
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::atomic<bool> settled{false};
  std::weak_ptr<Caller> caller;
  // For the execution record: what was asked, and where it ran (set by the
  // pool's on_start, on its thread; 0 while no worker took it).
  std::string language;
  std::atomic<std::uint64_t> worker{0};
  std::atomic<double> queue_seconds{0};
};

// The dispatcher a pool::Request carries for `run`.
pool::Dispatcher make_dispatcher(std::shared_ptr<Run> run);

// The completion the pool calls for `run`; `orphaned` is called instead of
// deliver when the caller is gone (for the instruments).
pool::Completion make_completion(std::shared_ptr<Run> run,
                                 std::function<void(const Run&, const pool::Outcome&)> orphaned);

}  // namespace corral::server
