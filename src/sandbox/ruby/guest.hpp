// src/sandbox/ruby/guest.hpp: one mruby interpreter that runs Ruby guests.
//
// A Guest owns at most one mrb_state at a time: opened with mruby's core and
// an explicit gem list (never mruby-io, mruby-socket or mruby-objectspace),
// the bound tools as constants, capped output and, under the hermetic
// profile, a frozen clock and a fixed random stream. Every run gets a state
// no earlier run touched; the next one is opened ahead of time (prepare()).
//
// It runs where the timeout can be enforced from outside: in the helper
// process (helper.cc) or inline in a pooled worker. It throws nothing into
// mruby: errors a guest can handle are raised as Ruby exceptions, and a stop
// (memory limit, tool-call budget, a tool wait that passed the deadline)
// leaves the state abandoned and the run's result marked `discard`.
#pragma once

#include <algorithm>
#include <csetjmp>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "corral/sandbox.hpp"
#include "sandbox/engine.hpp"
#include "sandbox/ruby/wire.hpp"

struct mrb_state;

namespace corral::sandbox::ruby {

// GuestSetup: what every state of one sandbox is built from.
struct GuestSetup {
  Profile profile = Profile::hermetic;
  std::uint64_t memory_limit = kNone;
  std::uint64_t stdout_limit = kNone;
  std::uint64_t stderr_limit = kNone;
  std::uint64_t max_tool_calls = kNone;
  std::vector<std::string> tools;  // Ruby paths: "KV.get", "Tools::Search.query"
  std::vector<Snippet> snippets;
};

// The most JSON text a run's value or a tool's argument may take: the run's
// memory limit (1 GiB without one, as for JavaScript), and never more than
// a frame to the host holds.
inline std::size_t json_limit(const GuestSetup& setup) {
  constexpr std::uint64_t kWithoutLimit = std::uint64_t{1} << 30;
  const std::uint64_t limit = setup.memory_limit == kNone ? kWithoutLimit : setup.memory_limit;
  return static_cast<std::size_t>(std::min<std::uint64_t>(limit, kFrameRoom));
}

struct GuestRequest {
  RunRequest::Kind kind = RunRequest::Kind::eval;
  std::string code;
  std::string entrypoint;
  std::string args_json = "[]";
};

struct GuestResult {
  std::uint8_t code = kNoFailure;  // a FailureCode, or kNoFailure
  std::string message;
  std::string value = "null";
  bool discard = false;  // the state was abandoned mid-run
};

// GuestHost: the side the guest's output and tool calls go to.
class GuestHost {
 public:
  enum class Answer { ok, error, stop };
  virtual ~GuestHost() = default;
  // `bytes` is already capped; channel 0 is stdout, 1 is stderr.
  virtual void write(int channel, std::string_view bytes) = 0;
  // Calls tool `index` with `args_json`. On ok, `out` is JSON text; on
  // error, a message for the guest; on stop, `stop_code` says why the run
  // must end now (timeout, cancelled).
  virtual Answer call_tool(std::uint32_t index, std::string args_json, std::string& out,
                           std::uint8_t& stop_code) = 0;
};

struct RunContext;

class Guest {
 public:
  Guest(GuestSetup setup, GuestHost& host, Counters& counters);
  ~Guest();
  Guest(const Guest&) = delete;
  Guest& operator=(const Guest&) = delete;

  // Closes the last run's state and opens the next run's, if none is open.
  void prepare();
  // Runs one request in a fresh state, then drops that state.
  GuestResult run(const GuestRequest& request);

  // Used by the mruby callbacks (guest.cc).
  struct Heap;
  void write(int channel, const char* bytes, std::size_t size);
  [[noreturn]] void stop(std::uint8_t code, const char* message);
  const GuestSetup& setup() const noexcept { return setup_; }
  GuestHost& host() noexcept { return host_; }
  Counters& counters() noexcept { return counters_; }
  // The compiled form of prelude `i`, empty until the first state made it.
  std::string& prelude_bytecode(int i) noexcept { return prelude_bytecode_[i]; }

 private:
  struct State;
  bool open(std::unique_ptr<State>& out, std::string& error);
  void run_body(State& state, const GuestRequest& request, GuestResult& result);

  GuestSetup setup_;
  GuestHost& host_;
  Counters& counters_;
  std::unique_ptr<State> next_;          // the next run's state, opened ahead
  std::unique_ptr<State> used_;          // the last run's, closed by prepare()
  std::unique_ptr<RunContext> context_;  // of the run in progress
  State* running_ = nullptr;
  std::jmp_buf stop_jump_;
  std::uint8_t stop_code_ = kNoFailure;
  std::string stop_message_;
  std::string prelude_bytecode_[3];
  std::uint64_t kept_[2] = {0, 0};
  bool truncated_[2] = {false, false};
};

}  // namespace corral::sandbox::ruby
