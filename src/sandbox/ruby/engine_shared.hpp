// src/sandbox/ruby/engine_shared.hpp: what the two Ruby engines share
// (HelperEngine in engine_ruby.cc, InlineEngine in inline_engine.cc): a
// Guest's setup from a Sandbox's options, the tool calls made for a guest,
// and a run's outcome from what the guest and its counters reported.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "corral/sandbox.hpp"
#include "sandbox/engine.hpp"
#include "sandbox/hosted.hpp"
#include "sandbox/ruby/guest.hpp"
#include "sandbox/ruby/wire.hpp"

namespace corral::sandbox::ruby {

double thread_cpu_seconds();

// Tool paths in their Ruby form; one that has none is passed as it is, for
// the guest to refuse at setup with its reason.
GuestSetup make_setup(const Options& options, const Registry& registry);

enum class ToolOutcome { ok, error, timeout, cancelled };

// What a run in progress shares with cancel().
struct Live {
  std::mutex mutex;
  bool running = false;
  bool cancelled = false;
  std::shared_ptr<Mailbox> mailbox;  // of the async tool call being waited for
};

// Calls a bound tool for the guest: sync on this thread, async through a
// mailbox this thread waits on until the answer, the deadline or cancel().
ToolOutcome invoke_tool(const ToolEntry& tool, std::string args, std::string& out,
                        std::optional<std::chrono::steady_clock::time_point> deadline, Live& live);

// Fills the parts of an outcome every mode computes the same way.
void finish_outcome(RunOutcome& outcome, const Options& options, const RunRequest& request,
                    const Counters& counters, std::string out, std::string err, double cpu);

// The guest's own verdict: its value, or its failure.
void apply_result(RunOutcome& outcome, const GuestResult& result, const Options& options);

// The engine of a process that may not spawn (inline_engine.cc).
std::unique_ptr<Engine> make_inline_engine(const Options& options, StuckRun on_stuck);

}  // namespace corral::sandbox::ruby
