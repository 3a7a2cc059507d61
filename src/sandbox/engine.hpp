// src/sandbox/engine.hpp: what a guest-language engine must do for Sandbox.
//
// Sandbox validates options, keeps the tool and snippet registries, seals
// them, serialises runs and turns outcomes into Executions or exceptions; an
// Engine runs one request in a fresh context and reports what happened.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "corral/execution.hpp"
#include "corral/failure.hpp"
#include "corral/sandbox.hpp"

namespace corral::sandbox {

struct ToolEntry {
  std::string path;  // "codemode.search"
  SyncTool sync;     // exactly one of sync / async is set
  AsyncTool async;
};

// A process that exists to run guests (a pool worker) asks for this: when an
// engine runs out of memory (V8's heap or an allocation it cannot survive
// failing), the process writes one line to stderr and _exit()s with `code`
// instead of aborting, so whoever watches it can tell an out-of-memory end
// from a crash. 0 (the default) keeps the engine's own abort.
void set_out_of_memory_exit(int code) noexcept;

// A process that runs one guest and exits (`corral run`) asks for this
// before its first Sandbox: V8 then starts from its built-in snapshot
// instead of making this process's own (about 20 ms and 0.5 MB once, repaid
// after a few hundred runs by contexts that need no rehashing; see
// v8engine::private_snapshot). No effect once a V8 sandbox exists.
void skip_private_snapshot() noexcept;

// What the guest sees of a tool that threw (call it inside a catch): a
// ToolError's message as "<path>: ...", anything else as "<path> failed:
// ...". Both engines, sync and async, say it the same way.
std::string thrown_tool_message(const std::string& path);

// Calls a synchronous tool: true with its JSON answer in `out`, or false
// with thrown_tool_message in `out`.
bool call_sync_tool(const ToolEntry& tool, std::string_view args, std::string& out);

// Calls an asynchronous tool. A tool that throws instead of answering
// rejects the call with thrown_tool_message, as if it had answered so.
void start_async_tool(const ToolEntry& tool, std::string args, ToolReply reply);

struct Snippet {
  std::string name;
  std::string code;
};

// Registry: the sealed, read-only set of tools and snippets an engine sees.
struct Registry {
  std::vector<ToolEntry> tools;
  std::vector<Snippet> snippets;
};

struct RunRequest {
  enum class Kind { eval, execute, call };
  Kind kind = Kind::eval;
  std::string code;        // eval / execute
  std::string entrypoint;  // call
  std::string args_json;   // call: a JSON array
  std::chrono::steady_clock::time_point entry;
  // Called once by the engine as soon as cancel() can reach the run. True
  // means a cancel came before that (Sandbox::cancel_including_next): the
  // engine cancels the run as cancel() would.
  std::function<bool()> take_early_cancel;
};

struct RunOutcome {
  ExecutionData data;
  std::optional<FailureCode> failure;  // empty on success
  std::string message;
};

// Mailbox: where asynchronous tool answers wait for the run's thread.
// Closed when the run settles; answers after that are refused.
struct Mailbox {
  struct Answer {
    std::uint64_t call_id;
    bool ok;
    std::string payload;  // JSON on ok, an error message otherwise
  };
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<Answer> answers;
  bool closed = false;
  bool wake = false;  // set by cancel/timeout to end a wait early

  bool post(Answer answer) {
    {
      std::lock_guard lock(mutex);
      if (closed) return false;
      answers.push_back(std::move(answer));
    }
    ready.notify_one();
    return true;
  }
  void poke() {
    {
      std::lock_guard lock(mutex);
      wake = true;
    }
    ready.notify_one();
  }
};

}  // namespace corral::sandbox

// ToolReply's shared state: which call, and the mailbox of its run.
struct corral::sandbox::ToolReply::State {
  std::weak_ptr<Mailbox> mailbox;
  std::uint64_t call_id = 0;
  std::atomic<bool> settled{false};
};

namespace corral::sandbox {

class Engine {
 public:
  virtual ~Engine() = default;
  // Runs `request` in a fresh context with the sealed `registry` (the same
  // object on every call). Never throws for anything the guest does.
  virtual RunOutcome run(const RunRequest& request, const Registry& registry) = 0;
  // Stops the current run with `cancelled`; any thread; no-op when idle.
  virtual void cancel() = 0;
};

// Creates the V8 engine. Throws corral::SetupError if V8 cannot start.
std::unique_ptr<Engine> make_v8_engine(const Options& options);

}  // namespace corral::sandbox
