// corral/sandbox.hpp: run untrusted JavaScript in-process, with hard bounds.
//
// A `Sandbox` owns one V8 isolate. Every run (`eval`, `execute`, `run`) gets a
// fresh context: nothing a run defines or mutates is visible to the next.
// Tools bound with `bind`/`bind_async` and snippets added with `preload`
// persist across runs; the first run seals both registries.
//
// Each run ends in a frozen `corral::Execution` or throws a `corral::Error`
// subclass carrying that run's Execution (output and usage up to the failure).
//
// Example:
//   corral::sandbox::Sandbox sandbox({.timeout = std::chrono::seconds(5)});
//   sandbox.bind("codemode.add", [](std::string_view args) {
//     auto v = nlohmann_or_yours::parse(args);       // JSON in ...
//     return std::to_string(v["a"] + v["b"]);           // ... JSON out
//   });
//   corral::Execution e = sandbox.execute(
//       "async () => { console.log('adding'); return codemode.add({a: 1, b: 2}); }");
//   e.value();        // "3"
//   e.stdout_text();  // "adding\n"
//
// Thread safety: one Sandbox may be used from several threads; its runs
// serialise (one isolate, one run at a time). `cancel()` may be called from
// any thread. Different Sandboxes run in parallel on different threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "corral/execution.hpp"
#include "corral/failure.hpp"
#include "corral/language.hpp"

namespace corral::sandbox {

// Profile: what the guest's world looks like beyond the bound tools.
//   hermetic:   Date is frozen at the epoch, Math.random is a fixed stream,
//               eval/new Function from strings are refused. Runs are
//               deterministic given the same tool answers.
//   permissive: real clocks, real randomness, eval from strings allowed.
// Neither profile exposes files, network, processes, timers or the
// environment: the guest has only what is bound.
enum class Profile { hermetic, permissive };

// Parses "hermetic" / "permissive"; throws std::invalid_argument naming
// "profile" for anything else.
Profile parse_profile(std::string_view text);
std::string_view to_string(Profile profile) noexcept;

// Language (corral/language.hpp): what the guest code of a Sandbox is
// written in.
//   javascript: V8 (the default).
//   ruby:       mruby 3.1, run in a helper process the Sandbox owns, so that
//               the timeout holds although mruby has no interrupt hook
//               (docs/ruby.md). Tool paths are Ruby constants with a method:
//               "KV.get", "Tools::Search.query" ("tools.search.query" binds
//               the same).
using corral::Language;
using corral::parse_language;
using corral::to_string;

// Options: the per-run bounds. Every cap accepts std::nullopt ("none").
struct Options {
  // Wall-clock time of the run itself, from the moment it has the Sandbox
  // (time spent waiting for another thread's run does not count; time spent
  // in tools does). At most 365 days.
  std::optional<std::chrono::milliseconds> timeout = std::chrono::seconds(60);
  // Longest a run waits for the Sandbox while another thread's run holds it;
  // past it the run fails with busy (CapacityError) and nothing ran. At most
  // 365 days.
  std::optional<std::chrono::milliseconds> queue_timeout = std::chrono::seconds(60);
  // Bytes of JavaScript heap plus ArrayBuffer memory a run may hold past the
  // fresh context's baseline.
  std::optional<std::uint64_t> memory_limit = std::uint64_t{64} << 20;
  // Bytes of console output kept per channel; later writes are dropped and
  // the channel's *_truncated flag is set. The run does not fail.
  std::optional<std::uint64_t> stdout_limit = std::uint64_t{1} << 20;
  std::optional<std::uint64_t> stderr_limit = std::uint64_t{1} << 20;
  // Tool calls a run may make; the call past it fails the run with tool_error.
  std::optional<std::uint64_t> max_tool_calls = 10'000;
  Profile profile = Profile::hermetic;
  // The guest language; fixed for the Sandbox's life.
  Language language = Language::javascript;
};

// Throws std::invalid_argument naming the first bad option (zero, negative,
// a duration past 365 days, unknown profile). Sandbox's
// constructor calls it.
void validate(const Options& options);

// ToolError: throw it from a tool to fail that call with a message the guest
// sees (a rejected promise or a thrown Error it can catch). Any other
// std::exception reaches the guest as "tool failed" with its what().
class ToolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  ~ToolError() override;
};

// ToolReply: how an asynchronous tool answers. Copyable; every copy refers to
// the same call. Thread-safe: call resolve or reject once, from any thread,
// at any time. Answers that arrive after the run settled are dropped and the
// call returns false.
class ToolReply {
 public:
  struct State;
  explicit ToolReply(std::shared_ptr<State> state) : state_(std::move(state)) {}

  // Fulfils the guest's promise with `json` (one JSON document). Invalid
  // JSON rejects the promise instead.
  bool resolve(std::string json) const;
  // Rejects the guest's promise with an Error whose message is `message`.
  bool reject(std::string message) const;

 private:
  std::shared_ptr<State> state_;
};

// SyncTool: takes the call's argument as JSON text, returns JSON text. The
// guest's call returns the value directly (no promise). Runs on the thread
// that runs the sandbox, while the guest waits. A run it starts on its own
// Sandbox is refused with invalid_request (it could never get the Sandbox).
using SyncTool = std::function<std::string(std::string_view args_json)>;
// AsyncTool: starts the work and answers through `reply`, now or later,
// from any thread. The guest's call returns a promise.
using AsyncTool = std::function<void(std::string args_json, ToolReply reply)>;

struct Hosted;

// Sandbox: see the file comment.
class Sandbox {
 public:
  // Throws std::invalid_argument for invalid options and corral::SetupError
  // when the engine cannot be set up.
  explicit Sandbox(Options options = {});
  // Cancels the run in flight on another thread, if any (it ends with
  // cancelled), fails the runs waiting for the Sandbox with cancelled, and
  // returns once all of them have returned. Must not run inside one of the
  // Sandbox's own tools.
  ~Sandbox();
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  // Binds a synchronous tool at a dotted path ("codemode.search"). Each
  // segment is a JavaScript identifier; the path may not equal, contain or
  // be contained by another bound path, nor shadow a JavaScript global.
  // Throws std::invalid_argument for a bad path or after the first run.
  Sandbox& bind(std::string path, SyncTool tool);
  // Binds an asynchronous tool; the guest's call returns a promise.
  Sandbox& bind_async(std::string path, AsyncTool tool);

  // Adds a snippet: code replayed, in insertion order, in every run's fresh
  // context before the run's own code. Its top-level functions are the
  // entry points `run` can call. Stack traces name it "(snippet:NAME)".
  // NAME is a JavaScript identifier, unique. Compile errors surface on the
  // first run. Throws std::invalid_argument after the first run.
  Sandbox& preload(std::string name, std::string code);

  // Runs `code` as a classic script; the value is its completion value,
  // awaited if it is a promise.
  Execution eval(std::string_view code);

  // Runs code in the shapes LLMs write for code mode and awaits the result:
  //   async () => { ... }          an (async) function expression: called
  //   async function main() {...}   a function declaration or expression
  //   return await codemode.x()     a function body (may use await/return)
  //   1 + 1                         any expression
  // A surrounding Markdown code fence (```js ... ```) is stripped.
  Execution execute(std::string_view code);

  // Calls the function a snippet defined at top level as `entrypoint` with
  // the elements of `args_json` (a JSON array) and awaits the result.
  // Throws std::invalid_argument for a bad name or args that are not a JSON
  // array (nothing runs); a name the snippets don't define fails the run
  // with invalid_request.
  Execution run(std::string_view entrypoint, std::string_view args_json = "[]");

  // Stops the run in progress, if any, with `cancelled`. Any thread.
  void cancel();

  // True when the most recent run ended in a trap (timeout, memory_limit,
  // cancelled). Pools discard such sandboxes.
  bool last_run_trapped() const noexcept;

  const Options& options() const noexcept;

  class Impl;

 private:
  friend struct Hosted;  // a pooled worker's Sandboxes (src/sandbox/hosted.hpp)
  explicit Sandbox(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Throws std::invalid_argument when Sandbox::bind would refuse `path` on a
// Sandbox of `language` that has `bound` bound already: for JavaScript a
// dotted path of identifiers that shadows no global; for Ruby constants and
// a method (docs/ruby.md). Neither may equal, contain or be contained by a
// bound path.
void check_tool_path(Language language, std::string_view path,
                     const std::vector<std::string>& bound);

// Pool: a fixed set of sandboxes for multi-threaded embedders.
//
// `checkout()` hands out a Lease (RAII); returning it gives the sandbox back.
// A sandbox whose last run trapped is discarded and replaced by a new one
// from the factory. Thread-safe.
//
//   Pool pool(4, std::chrono::seconds(5), [] {
//     auto s = std::make_unique<Sandbox>();
//     s->bind("codemode.kv_get", kv_get);
//     return s;
//   });
//   Execution e = pool.checkout()->execute(code);
class Pool {
 public:
  using Factory = std::function<std::unique_ptr<Sandbox>()>;

  // Throws std::invalid_argument when slots is 0 or checkout_timeout is not
  // positive or past 365 days (std::nullopt waits forever).
  Pool(std::size_t slots, std::optional<std::chrono::milliseconds> checkout_timeout,
       Factory factory);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  class Lease {
   public:
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    Sandbox& operator*() const noexcept { return *sandbox_; }
    Sandbox* operator->() const noexcept { return sandbox_.get(); }

   private:
    friend class Pool;
    Lease(Pool* pool, std::unique_ptr<Sandbox> sandbox)
        : pool_(pool), sandbox_(std::move(sandbox)) {}
    Pool* pool_;
    std::unique_ptr<Sandbox> sandbox_;
  };

  // Waits up to checkout_timeout for a free sandbox; then throws
  // corral::CapacityError with code busy. Sandboxes are built lazily.
  Lease checkout();

  std::size_t slots() const noexcept { return slots_; }
  // Sandboxes discarded because their run trapped.
  std::uint64_t discarded() const noexcept;

 private:
  void give_back(std::unique_ptr<Sandbox> sandbox);

  struct State;
  std::size_t slots_;
  std::unique_ptr<State> state_;
};

}  // namespace corral::sandbox
