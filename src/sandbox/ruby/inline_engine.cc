// InlineEngine (Hosting::may_spawn false: the Sandboxes of a locked-down
// pooled worker): guests run on the caller's thread in one long-lived Guest.
// A run that Ruby code keeps busy past its deadline or a cancel cannot be
// interrupted here: it is handed to the Hosting's stuck handler, whose
// process ends it.
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "sandbox/ruby/engine_shared.hpp"
#include "sandbox/ruby/guest.hpp"
#include "sandbox/watchdog.hpp"

namespace corral::sandbox {
namespace {

using Clock = std::chrono::steady_clock;

class InlineEngine : public Engine, private ruby::GuestHost {
 public:
  InlineEngine(const Options& options, StuckRun on_stuck)
      : options_(options), stuck_(std::move(on_stuck)) {}

  void cancel() override {
    bool waiting_for_tool = false;
    {
      std::lock_guard lock(live_.mutex);
      if (!live_.running) return;
      live_.cancelled = true;
      waiting_for_tool = live_.mailbox != nullptr;
      if (waiting_for_tool) live_.mailbox->poke();
    }
    // A tool wait ends on the poke; Ruby code only through the handler.
    if (!waiting_for_tool) report_stuck(FailureCode::cancelled);
  }

  RunOutcome run(const RunRequest& request, const Registry& registry) override {
    RunOutcome outcome;
    registry_ = &registry;
    stuck_reported_ = false;
    entry_ = request.entry;
    deadline_.reset();
    if (options_.timeout) {
      deadline_ = request.entry + *options_.timeout;
    }
    {
      std::lock_guard lock(live_.mutex);
      live_.running = true;
      live_.cancelled = false;
    }
    // A cancel that came before the run could take it: no Ruby runs (an
    // inline guest cannot be interrupted once it does).
    const bool cancelled_early = request.take_early_cancel && request.take_early_cancel();
    if (!guest_)
      guest_ = std::make_unique<ruby::Guest>(ruby::make_setup(options_, registry),
                                             static_cast<ruby::GuestHost&>(*this), counters_);
    counters_.reset();
    out_.clear();
    err_.clear();
    const double cpu_start = ruby::thread_cpu_seconds();
    ruby::GuestRequest guest_request;
    guest_request.kind = request.kind;
    guest_request.code = request.code;
    guest_request.entrypoint = request.entrypoint;
    guest_request.args_json = request.args_json.empty() ? "[]" : request.args_json;
    Watchdog::Id watchdog = 0;
    if (deadline_ && stuck_) {
      watchdog = Watchdog::instance().arm(*deadline_, [this] {
        bool waiting_for_tool = false;
        {
          std::lock_guard lock(live_.mutex);
          waiting_for_tool = live_.mailbox != nullptr;
        }
        // A tool wait ends at the deadline by itself; Ruby code does not.
        if (!waiting_for_tool) report_stuck(FailureCode::timeout);
      });
    }
    if (cancelled_early) {
      std::lock_guard lock(live_.mutex);
      live_.cancelled = true;
    } else {
      const ruby::GuestResult result = guest_->run(guest_request);
      ruby::apply_result(outcome, result, options_);
    }
    if (watchdog) Watchdog::instance().disarm(watchdog);
    {
      std::lock_guard lock(live_.mutex);
      live_.running = false;
      if (live_.cancelled && !outcome.failure) outcome.failure = FailureCode::cancelled;
    }
    if (!outcome.failure && deadline_ && Clock::now() >= *deadline_) {
      outcome.failure = FailureCode::timeout;
    }
    {
      std::lock_guard lock(output_mutex_);
      ruby::finish_outcome(outcome, options_, request, counters_, std::move(out_), std::move(err_),
                           ruby::thread_cpu_seconds() - cpu_start);
    }
    guest_->prepare();
    return outcome;
  }

 private:
  void write(int channel, std::string_view bytes) override {
    std::lock_guard lock(output_mutex_);
    (channel == 1 ? err_ : out_).append(bytes);
  }

  // Hands a run that Ruby code keeps busy to the stuck handler, once.
  void report_stuck(FailureCode code) {
    if (!stuck_) return;
    {
      std::lock_guard lock(live_.mutex);
      if (!live_.running || stuck_reported_) return;
      stuck_reported_ = true;
    }
    RunOutcome outcome;
    outcome.failure = code;
    RunRequest request;
    request.entry = entry_;
    {
      std::lock_guard lock(output_mutex_);
      ruby::finish_outcome(outcome, options_, request, counters_, out_, err_, 0);
    }
    stuck_(
        Failure{code, outcome.message, std::make_shared<const Execution>(std::move(outcome.data))});
  }

  Answer call_tool(std::uint32_t index, std::string args_json, std::string& out,
                   std::uint8_t& stop_code) override {
    if (index >= registry_->tools.size()) return Answer::error;
    switch (
        ruby::invoke_tool(registry_->tools[index], std::move(args_json), out, deadline_, live_)) {
      case ruby::ToolOutcome::ok:
        return Answer::ok;
      case ruby::ToolOutcome::error:
        return Answer::error;
      case ruby::ToolOutcome::timeout:
        stop_code = static_cast<std::uint8_t>(FailureCode::timeout);
        return Answer::stop;
      case ruby::ToolOutcome::cancelled:
        stop_code = static_cast<std::uint8_t>(FailureCode::cancelled);
        return Answer::stop;
    }
    return Answer::error;
  }

  Options options_;
  ruby::Live live_;
  ruby::Counters counters_;
  StuckRun stuck_;
  bool stuck_reported_ = false;  // under live_.mutex
  std::chrono::steady_clock::time_point entry_;
  std::mutex output_mutex_;  // out_, err_: the stuck handler reads them
  std::unique_ptr<ruby::Guest> guest_;
  const Registry* registry_ = nullptr;
  std::optional<Clock::time_point> deadline_;
  std::string out_;
  std::string err_;
};

}  // namespace

std::unique_ptr<Engine> ruby::make_inline_engine(const Options& options, StuckRun on_stuck) {
  return std::make_unique<InlineEngine>(options, std::move(on_stuck));
}

}  // namespace corral::sandbox
