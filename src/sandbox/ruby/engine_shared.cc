// What both Ruby engines do the same way (engine_shared.hpp): a Guest's
// setup, a tool call for the guest (and the wait for an async answer), the
// outcome of a run with its messages, UTF-8 repair and usage.
#include "sandbox/ruby/engine_shared.hpp"

#include <time.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "core/units.hpp"
#include "core/utf8.hpp"
#include "sandbox/ruby/engine_ruby.hpp"

namespace corral::sandbox::ruby {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxMessageBytes = 16 * 1024;

std::uint64_t or_none(const std::optional<std::uint64_t>& v) { return v ? *v : kNone; }

}  // namespace

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

GuestSetup make_setup(const Options& options, const Registry& registry) {
  GuestSetup setup;
  setup.profile = options.profile;
  setup.memory_limit = or_none(options.memory_limit);
  setup.stdout_limit = or_none(options.stdout_limit);
  setup.stderr_limit = or_none(options.stderr_limit);
  setup.max_tool_calls = or_none(options.max_tool_calls);
  for (const ToolEntry& tool : registry.tools) {
    std::string path;
    try {
      path = ruby_tool_path(tool.path);
    } catch (const std::invalid_argument&) {
      path = tool.path;  // the guest refuses it at setup, with its reason
    }
    setup.tools.push_back(std::move(path));
  }
  setup.snippets = registry.snippets;
  return setup;
}

ToolOutcome invoke_tool(const ToolEntry& tool, std::string args, std::string& out,
                        std::optional<Clock::time_point> deadline, Live& live) {
  if (tool.sync) {
    const bool ok = call_sync_tool(tool, args, out);
    {
      std::lock_guard lock(live.mutex);
      if (live.cancelled) return ToolOutcome::cancelled;
    }
    if (deadline && Clock::now() >= *deadline) return ToolOutcome::timeout;
    return ok ? ToolOutcome::ok : ToolOutcome::error;
  }
  auto mailbox = std::make_shared<Mailbox>();
  {
    std::lock_guard lock(live.mutex);
    if (live.cancelled) return ToolOutcome::cancelled;
    live.mailbox = mailbox;
  }
  auto state = std::make_shared<ToolReply::State>();
  state->mailbox = mailbox;
  state->call_id = 1;
  start_async_tool(tool, std::move(args), ToolReply(state));
  ToolOutcome result = ToolOutcome::timeout;
  {
    std::unique_lock lock(mailbox->mutex);
    auto ready = [&] { return !mailbox->answers.empty() || mailbox->wake; };
    bool got = true;
    if (deadline) {
      got = mailbox->ready.wait_until(lock, *deadline, ready);
    } else {
      mailbox->ready.wait(lock, ready);
    }
    if (got && !mailbox->answers.empty()) {
      Mailbox::Answer& answer = mailbox->answers.front();
      out = std::move(answer.payload);
      result = answer.ok ? ToolOutcome::ok : ToolOutcome::error;
    } else if (got) {
      result = ToolOutcome::cancelled;
    }
    mailbox->closed = true;
  }
  std::lock_guard lock(live.mutex);
  live.mailbox.reset();
  if (live.cancelled) return ToolOutcome::cancelled;
  return result;
}

void finish_outcome(RunOutcome& outcome, const Options& options, const RunRequest& request,
                    const Counters& counters, std::string out, std::string err, double cpu) {
  if (outcome.failure) {
    switch (*outcome.failure) {
      case FailureCode::timeout:
        outcome.message =
            "the run exceeded its timeout of " + core::format_duration(*options.timeout);
        break;
      case FailureCode::memory_limit:
        // The allocator's stop says nothing; a value too large as JSON says
        // what and where (and may come from a run without a limit).
        if (outcome.message.empty() && options.memory_limit) {
          outcome.message = "the run exceeded its memory limit of " +
                            std::to_string(*options.memory_limit) + " bytes";
        }
        break;
      case FailureCode::cancelled:
        outcome.message = "the run was cancelled";
        break;
      default:
        break;
    }
  }
  // Ruby strings are bytes: what reaches the host is made UTF-8 here, once
  // (core/utf8.hpp), and the result says which channel had bytes replaced.
  core::replace_invalid_utf8(outcome.message);
  if (outcome.message.size() > kMaxMessageBytes) {
    outcome.message.resize(core::utf8_cut(outcome.message, kMaxMessageBytes));
    outcome.message += "... (message truncated)";
  }
  ExecutionData& data = outcome.data;
  data.failed = outcome.failure.has_value();
  if (data.failed) data.value = "null";
  data.stdout_replaced = core::replace_invalid_utf8(out);
  data.stderr_replaced = core::replace_invalid_utf8(err);
  data.stdout_text = std::move(out);
  data.stderr_text = std::move(err);
  data.stdout_truncated = counters.stdout_truncated.load() != 0;
  data.stderr_truncated = counters.stderr_truncated.load() != 0;
  data.usage.output_bytes = counters.offered_stdout.load() + counters.offered_stderr.load();
  data.usage.tool_calls = counters.tool_calls.load();
  data.usage.memory_peak = counters.memory_peak.load();
  data.usage.cpu_time = cpu;
  data.usage.wall_time = std::chrono::duration<double>(Clock::now() - request.entry).count();
}

void apply_result(RunOutcome& outcome, const GuestResult& result, const Options& options) {
  if (result.code == kNoFailure) {
    outcome.data.value = result.value;
    return;
  }
  outcome.failure = static_cast<FailureCode>(result.code);
  outcome.message = result.message;
  if (outcome.failure == FailureCode::tool_error && result.message.empty() &&
      options.max_tool_calls) {
    outcome.message = "the run made more than " + std::to_string(*options.max_tool_calls) +
                      " tool calls (max_tool_calls)";
  }
}

}  // namespace corral::sandbox::ruby
