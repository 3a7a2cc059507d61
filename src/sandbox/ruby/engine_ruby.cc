#include "sandbox/ruby/engine_ruby.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "core/utf8.hpp"
#include "sandbox/output.hpp"
#include "sandbox/ruby/guest.hpp"
#include "sandbox/ruby/helper.hpp"
#include "sandbox/ruby/wire.hpp"
#include "sandbox/watchdog.hpp"

namespace corral::sandbox {
namespace {

using Clock = std::chrono::steady_clock;
using ruby::kNoFailure;
using ruby::kNone;

constexpr std::size_t kMaxMessageBytes = 16 * 1024;

std::uint64_t or_none(const std::optional<std::uint64_t>& v) { return v ? *v : kNone; }

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

bool is_ascii_identifier(std::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

ruby::GuestSetup make_setup(const Options& options, const Registry& registry) {
  ruby::GuestSetup setup;
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
                        std::optional<Clock::time_point> deadline, Live& live) {
  if (tool.sync) {
    bool ok = false;
    try {
      out = tool.sync(args);
      ok = true;
    } catch (const ToolError& e) {
      out = tool.path + ": " + e.what();
    } catch (const std::exception& e) {
      out = tool.path + " failed: " + e.what();
    } catch (...) {
      out = tool.path + " failed";
    }
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

// Fills the parts of an outcome every mode computes the same way.
void finish(RunOutcome& outcome, const Options& options, const RunRequest& request,
            const ruby::Counters& counters, std::string out, std::string err, double cpu) {
  if (outcome.failure) {
    switch (*outcome.failure) {
      case FailureCode::timeout:
        outcome.message =
            "the run exceeded its timeout of " + format_seconds(options.timeout->count());
        break;
      case FailureCode::memory_limit:
        outcome.message = "the run exceeded its memory limit of " +
                          std::to_string(*options.memory_limit) + " bytes";
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
  if (outcome.failure == FailureCode::memory_limit && options.memory_limit) {
    data.usage.memory_peak = std::min(data.usage.memory_peak, *options.memory_limit);
  }
  data.usage.cpu_time = cpu;
  data.usage.wall_time = std::chrono::duration<double>(Clock::now() - request.entry).count();
}

void apply_result(RunOutcome& outcome, const ruby::GuestResult& result, const Options& options) {
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

// ---- helper mode ------------------------------------------------------------

// What a helper that ended under a run tells about it.
// `ready` is false for a helper that never said hello.
std::pair<FailureCode, std::string> helper_ended(int signal, int status, bool ready) {
  using ruby::HelperProcess;
  if (signal) {
    return {FailureCode::internal,
            "the Ruby helper process died (signal " + std::to_string(signal) + ")"};
  }
  switch (status) {
    case HelperProcess::kExitNoLockdown:
      return {FailureCode::unavailable,
              "the Ruby helper process could not lock itself down (no_new_privs and seccomp "
              "are required to run Ruby guests)"};
    case HelperProcess::kExitMismatch:
      return {FailureCode::unavailable,
              "the Ruby helper program is from another corral build (it does not speak " +
                  std::string(ruby::kHelperProtocol) + "; see CORRAL_RUBY_HELPER in docs/ruby.md)"};
    case HelperProcess::kExitNoThread:
      return {FailureCode::unavailable, "the Ruby helper process could not start its thread"};
    default:
      if (!ready) {
        return {FailureCode::unavailable,
                "the Ruby helper program ended before it was ready (exit status " +
                    std::to_string(status) + "; is CORRAL_RUBY_HELPER a corral-ruby-helper?)"};
      }
      return {FailureCode::internal, "the Ruby helper process broke its protocol (exit status " +
                                         std::to_string(status) + ")"};
  }
}

class HelperEngine : public Engine {
 public:
  explicit HelperEngine(const Options& options) : options_(options) {
    cancel_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (cancel_fd_ < 0) throw SetupError(FailureCode::setup_error, "eventfd failed");
  }
  ~HelperEngine() override {
    helper_.reset();
    ::close(cancel_fd_);
  }

  void cancel() override {
    std::lock_guard lock(live_.mutex);
    if (!live_.running) return;
    live_.cancelled = true;
    const std::uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(cancel_fd_, &one, sizeof one);
    if (live_.mailbox) live_.mailbox->poke();
  }

  RunOutcome run(const RunRequest& request, const Registry& registry) override;

 private:
  enum class Wait { frame, timeout, cancelled, broken };
  Wait next_frame(std::string& body, std::optional<Clock::time_point> deadline);
  bool send(std::string& frame) { return ruby::write_all(helper_->fd(), frame); }

  // One run's state on the host side of the helper.
  struct HelperRun {
    HelperRun(const Options& options, const RunRequest& request)
        : out(options.stdout_limit), err(options.stderr_limit) {
      if (options.timeout) {
        deadline = request.entry + std::chrono::duration_cast<Clock::duration>(*options.timeout);
      }
    }
    // The first failure a run records is its failure; one the helper cannot
    // survive (stopped, gone, off its protocol) also ends the helper.
    void fail(FailureCode code, std::string message) {
      if (outcome.failure) return;
      outcome.failure = code;
      outcome.message = std::move(message);
    }
    void end(FailureCode code, std::string message) {
      kill = true;
      fail(code, std::move(message));
    }
    RunOutcome outcome;
    std::optional<Clock::time_point> deadline;
    CappedOutput out;
    CappedOutput err;
    double cpu = 0;
    bool kill = false;     // the helper must go: it was stopped or broke its protocol
    bool exiting = false;  // the helper is ending itself after this run
  };

  // The steps of run(), in order.
  void begin_run();
  bool start_helper(HelperRun& run);
  void greet(HelperRun& run, const Registry& registry);
  void exchange(HelperRun& run, const RunRequest& request, const Registry& registry);
  bool on_frame(HelperRun& run, std::string_view body, const Registry& registry);
  void helper_died(HelperRun& run, bool ready);
  const ruby::Counters& end_helper(HelperRun& run, ruby::Counters& counters);

  Options options_;
  int cancel_fd_ = -1;
  Live live_;
  std::unique_ptr<ruby::HelperProcess> helper_;
  ruby::Counters spare_counters_;
  std::string inbox_;
};

HelperEngine::Wait HelperEngine::next_frame(std::string& body,
                                            std::optional<Clock::time_point> deadline) {
  for (;;) {
    if (inbox_.size() >= 4) {
      std::uint32_t length = 0;
      std::memcpy(&length, inbox_.data(), 4);
      if (length == 0 || length > ruby::kMaxFrame) return Wait::broken;
      if (inbox_.size() >= 4 + std::size_t{length}) {
        body.assign(inbox_, 4, length);
        inbox_.erase(0, 4 + std::size_t{length});
        return Wait::frame;
      }
    }
    int timeout_ms = -1;
    if (deadline) {
      const auto left = *deadline - Clock::now();
      if (left <= Clock::duration::zero()) return Wait::timeout;
      timeout_ms = static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(left).count());
    }
    pollfd fds[2] = {{helper_->fd(), POLLIN, 0}, {cancel_fd_, POLLIN, 0}};
    const int n = ::poll(fds, 2, timeout_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Wait::broken;
    }
    if (fds[1].revents & POLLIN) return Wait::cancelled;
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char buffer[64 * 1024];
      const ssize_t got = ::recv(helper_->fd(), buffer, sizeof buffer, 0);
      if (got == 0) return Wait::broken;
      if (got < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        return Wait::broken;
      }
      inbox_.append(buffer, static_cast<std::size_t>(got));
    }
  }
}

RunOutcome HelperEngine::run(const RunRequest& request, const Registry& registry) {
  begin_run();
  if (request.take_early_cancel && request.take_early_cancel()) cancel();
  HelperRun run(options_, request);
  const bool fresh = start_helper(run);
  ruby::Counters& counters = helper_ ? helper_->counters() : spare_counters_;
  counters.reset();
  inbox_.clear();
  // A new helper says hello once it is locked down; only then does it get
  // the setup.
  if (helper_ && fresh) greet(run, registry);
  if (helper_ && !run.kill) exchange(run, request, registry);
  {
    std::lock_guard lock(live_.mutex);
    live_.running = false;
  }
  const ruby::Counters& read = end_helper(run, counters);
  finish(run.outcome, options_, request, read, run.out.take(), run.err.take(), run.cpu);
  return std::move(run.outcome);
}

void HelperEngine::begin_run() {
  std::lock_guard lock(live_.mutex);
  live_.running = true;
  live_.cancelled = false;
  std::uint64_t drained = 0;
  [[maybe_unused]] ssize_t n = ::read(cancel_fd_, &drained, sizeof drained);
}

// True when a new helper was started for this run.
bool HelperEngine::start_helper(HelperRun& run) {
  if (helper_) return false;
  std::string error;
  helper_ = ruby::HelperProcess::spawn(error);
  if (!helper_) {
    run.fail(FailureCode::unavailable, "the Ruby helper process could not start: " + error);
    return false;
  }
  return true;
}

void HelperEngine::greet(HelperRun& run, const Registry& registry) {
  std::string body;
  const Wait wait = next_frame(body, run.deadline);
  if (wait == Wait::timeout || wait == Wait::cancelled) {
    run.end(wait == Wait::timeout ? FailureCode::timeout : FailureCode::cancelled, "");
    return;
  }
  if (wait != Wait::frame || body.size() != 1 ||
      static_cast<ruby::Frame>(body[0]) != ruby::Frame::hello) {
    helper_died(run, /*ready=*/false);
    return;
  }
  ruby::Writer setup(ruby::Frame::setup);
  const ruby::GuestSetup s = make_setup(options_, registry);
  setup.u8(s.profile == Profile::permissive ? 1 : 0)
      .u64(s.memory_limit)
      .u64(s.stdout_limit)
      .u64(s.stderr_limit)
      .u64(s.max_tool_calls)
      .u32(static_cast<std::uint32_t>(s.tools.size()));
  for (const std::string& path : s.tools) setup.str(path);
  setup.u32(static_cast<std::uint32_t>(s.snippets.size()));
  for (const Snippet& snippet : s.snippets) setup.str(snippet.name).str(snippet.code);
  if (!send(setup.finish())) run.end(FailureCode::internal, "the Ruby helper process is gone");
}

// Sends the run, then serves the helper's frames until it is done.
void HelperEngine::exchange(HelperRun& run, const RunRequest& request, const Registry& registry) {
  ruby::Writer frame(ruby::Frame::run);
  frame.u8(static_cast<std::uint8_t>(request.kind))
      .str(request.code)
      .str(request.entrypoint)
      .str(request.args_json.empty() ? std::string_view("[]") : request.args_json);
  if (!send(frame.finish())) {
    run.end(FailureCode::internal, "the Ruby helper process is gone");
    return;
  }
  std::string body;
  while (!run.kill) {
    const Wait wait = next_frame(body, run.deadline);
    if (wait == Wait::timeout || wait == Wait::cancelled) {
      run.end(wait == Wait::timeout ? FailureCode::timeout : FailureCode::cancelled, "");
      return;
    }
    if (wait == Wait::broken) {
      helper_died(run, /*ready=*/true);
      return;
    }
    if (!on_frame(run, body, registry)) return;
  }
}

// One frame from the helper during a run; false once the run is over.
bool HelperEngine::on_frame(HelperRun& run, std::string_view body, const Registry& registry) {
  constexpr std::string_view kBroken = "the Ruby helper process broke its protocol";
  ruby::Reader reader(body);
  const auto type = static_cast<ruby::Frame>(reader.u8());
  if (type == ruby::Frame::out) {
    const std::uint8_t channel = reader.u8();
    const std::string_view bytes = reader.str();
    if (!reader.ok()) {
      run.end(FailureCode::internal, std::string(kBroken));
      return false;
    }
    // The helper caps its output; the host holds it to the caps too.
    (channel == 1 ? run.err : run.out).write(bytes);
    return true;
  }
  if (type == ruby::Frame::call) {
    const std::uint32_t index = reader.u32();
    std::string args(reader.str());
    if (!reader.ok() || index >= registry.tools.size()) {
      run.end(FailureCode::internal, std::string(kBroken));
      return false;
    }
    std::string answer;
    const ToolOutcome result =
        invoke_tool(registry.tools[index], std::move(args), answer, run.deadline, live_);
    if (result == ToolOutcome::timeout || result == ToolOutcome::cancelled) {
      run.end(result == ToolOutcome::timeout ? FailureCode::timeout : FailureCode::cancelled, "");
      return false;
    }
    ruby::Writer reply(ruby::Frame::answer);
    reply.u8(result == ToolOutcome::ok ? 1 : 0).str(answer);
    if (!send(reply.finish())) run.end(FailureCode::internal, "the Ruby helper process is gone");
    return true;
  }
  if (type == ruby::Frame::done) {
    ruby::GuestResult result;
    result.code = reader.u8();
    result.message = std::string(reader.str());
    result.value = std::string(reader.str());
    const double cpu = reader.f64();
    result.discard = reader.u8() != 0;
    if (!reader.ok() || (result.code != kNoFailure && result.code >= kFailureCodeCount)) {
      run.end(FailureCode::internal, std::string(kBroken));
      return false;
    }
    run.cpu = cpu;
    apply_result(run.outcome, result, options_);
    run.exiting = result.discard;
    return false;
  }
  run.end(FailureCode::internal, std::string(kBroken));
  return false;
}

// The helper closed its end or broke a frame: it is killed and reaped, and
// its exit says what the run fails with.
void HelperEngine::helper_died(HelperRun& run, bool ready) {
  run.kill = true;
  int signal = 0;
  int status = 0;
  run.cpu = helper_->kill_and_reap(&signal, &status);
  const auto [code, message] = helper_ended(signal, status, ready);
  run.fail(code, message);
}

// Ends a helper that must go or is going; returns the counters the run's
// usage is read from (a copy, once the helper's page is gone).
const ruby::Counters& HelperEngine::end_helper(HelperRun& run, ruby::Counters& counters) {
  if (!helper_ || !(run.kill || run.exiting)) return counters;
  const double total = run.exiting ? helper_->reap() : helper_->kill_and_reap();
  if (run.kill && run.cpu == 0) {
    run.cpu = std::max(0.0, total - static_cast<double>(counters.cpu_ns_at_start.load()) / 1e9);
  }
  // Keep the counters readable: copy them before the page goes away.
  spare_counters_.memory_peak = counters.memory_peak.load();
  spare_counters_.offered_stdout = counters.offered_stdout.load();
  spare_counters_.offered_stderr = counters.offered_stderr.load();
  spare_counters_.tool_calls = counters.tool_calls.load();
  spare_counters_.stdout_truncated = counters.stdout_truncated.load();
  spare_counters_.stderr_truncated = counters.stderr_truncated.load();
  helper_.reset();
  return spare_counters_;
}

// ---- inline mode ------------------------------------------------------------

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
      deadline_ = request.entry + std::chrono::duration_cast<Clock::duration>(*options_.timeout);
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
      guest_ = std::make_unique<ruby::Guest>(make_setup(options_, registry),
                                             static_cast<ruby::GuestHost&>(*this), counters_);
    counters_.reset();
    out_.clear();
    err_.clear();
    const double cpu_start = thread_cpu_seconds();
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
      apply_result(outcome, result, options_);
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
      finish(outcome, options_, request, counters_, std::move(out_), std::move(err_),
             thread_cpu_seconds() - cpu_start);
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
      finish(outcome, options_, request, counters_, out_, err_, 0);
    }
    stuck_(
        Failure{code, outcome.message, std::make_shared<const Execution>(std::move(outcome.data))});
  }

  Answer call_tool(std::uint32_t index, std::string args_json, std::string& out,
                   std::uint8_t& stop_code) override {
    if (index >= registry_->tools.size()) return Answer::error;
    switch (invoke_tool(registry_->tools[index], std::move(args_json), out, deadline_, live_)) {
      case ToolOutcome::ok:
        return Answer::ok;
      case ToolOutcome::error:
        return Answer::error;
      case ToolOutcome::timeout:
        stop_code = static_cast<std::uint8_t>(FailureCode::timeout);
        return Answer::stop;
      case ToolOutcome::cancelled:
        stop_code = static_cast<std::uint8_t>(FailureCode::cancelled);
        return Answer::stop;
    }
    return Answer::error;
  }

  Options options_;
  Live live_;
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

std::unique_ptr<Engine> make_ruby_engine(const Options& options, const Hosting& hosting) {
  if (!hosting.may_spawn) return std::make_unique<InlineEngine>(options, hosting.on_stuck);
  return std::make_unique<HelperEngine>(options);
}

std::string ruby_tool_path(std::string_view path) {
  std::vector<std::string> segments;
  std::string_view rest = path;
  while (true) {
    const std::size_t dot = rest.find('.');
    const std::size_t colons = rest.find("::");
    const std::size_t cut = std::min(dot, colons);
    segments.emplace_back(rest.substr(0, cut));
    if (cut == std::string_view::npos) break;
    // "::" may only separate constants: not after the method's dot.
    rest.remove_prefix(cut + (cut == colons ? 2 : 1));
  }
  if (segments.size() < 2) {
    throw std::invalid_argument("bind: \"" + std::string(path) +
                                "\" is not a Ruby tool path (Const.method or Const::Const.method)");
  }
  std::string ruby;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    std::string& segment = segments[i];
    if (!is_ascii_identifier(segment)) {
      throw std::invalid_argument("bind: \"" + std::string(path) + "\" has a segment \"" + segment +
                                  "\" that is not an ASCII identifier");
    }
    if (i + 1 < segments.size()) {
      if (segment[0] == '_') {
        throw std::invalid_argument("bind: \"" + std::string(path) + "\": \"" + segment +
                                    "\" cannot be a Ruby constant");
      }
      if (segment[0] >= 'a' && segment[0] <= 'z') segment[0] = static_cast<char>(segment[0] - 32);
      ruby += (i == 0 ? "" : "::") + segment;
    } else {
      ruby += "." + segment;
    }
  }
  return ruby;
}

namespace {

// Top-level constants of a guest's state before any tool is bound.
constexpr std::string_view kRubyConstants[] = {"ArgumentError",
                                               "Array",
                                               "BasicObject",
                                               "Class",
                                               "Comparable",
                                               "Complex",
                                               "Corral",
                                               "Data",
                                               "Dir",
                                               "Enumerable",
                                               "Enumerator",
                                               "ENV",
                                               "Exception",
                                               "FalseClass",
                                               "Fiber",
                                               "FiberError",
                                               "File",
                                               "Float",
                                               "FloatDomainError",
                                               "FrozenError",
                                               "GC",
                                               "Hash",
                                               "IndexError",
                                               "Integer",
                                               "IO",
                                               "KeyError",
                                               "Kernel",
                                               "LocalJumpError",
                                               "Math",
                                               "Method",
                                               "Module",
                                               "NameError",
                                               "NilClass",
                                               "NoMemoryError",
                                               "NoMethodError",
                                               "NotImplementedError",
                                               "Numeric",
                                               "Object",
                                               "ObjectSpace",
                                               "Proc",
                                               "Process",
                                               "Random",
                                               "Range",
                                               "RangeError",
                                               "Rational",
                                               "RegexpError",
                                               "RuntimeError",
                                               "ScriptError",
                                               "SecurityError",
                                               "Socket",
                                               "StandardError",
                                               "StopIteration",
                                               "String",
                                               "Struct",
                                               "Symbol",
                                               "SyntaxError",
                                               "SystemStackError",
                                               "Time",
                                               "TrueClass",
                                               "TypeError",
                                               "UnboundMethod",
                                               "ZeroDivisionError",
                                               "STDOUT",
                                               "STDERR",
                                               "RUBY_VERSION",
                                               "RUBY_ENGINE",
                                               "MRUBY_VERSION"};

// "Tools::Search.query" -> "Tools.Search.query", for overlap checks.
std::string dotted(const std::string& ruby) {
  std::string out;
  for (std::size_t i = 0; i < ruby.size(); ++i) {
    if (ruby.compare(i, 2, "::") == 0) {
      out.push_back('.');
      ++i;
    } else {
      out.push_back(ruby[i]);
    }
  }
  return out;
}

}  // namespace

void check_ruby_tool_path(std::string_view path, const std::vector<std::string>& bound) {
  const std::string ruby = dotted(ruby_tool_path(path));
  const std::string_view first = std::string_view(ruby).substr(0, ruby.find('.'));
  for (std::string_view reserved : kRubyConstants) {
    if (first == reserved) {
      throw std::invalid_argument("bind: \"" + std::string(path) +
                                  "\" would reopen the Ruby constant " + std::string(reserved));
    }
  }
  for (const std::string& other_path : bound) {
    std::string other;
    try {
      other = dotted(ruby_tool_path(other_path));
    } catch (const std::invalid_argument&) {
      continue;
    }
    if (paths_overlap(other, ruby)) {
      throw std::invalid_argument("bind: \"" + std::string(path) +
                                  "\" collides with the bound path \"" + other_path + "\"");
    }
  }
}

}  // namespace corral::sandbox
