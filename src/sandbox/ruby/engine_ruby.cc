// HelperEngine, the Ruby engine of a process that may spawn: every run in
// the sandbox's corral-ruby-helper process (helper.hpp), over its socket in
// length-prefixed frames (wire.hpp): the setup once, then per run the
// request, the guest's output and tool calls, and its result. Timeout and
// cancel kill the helper; the next run starts another. make_ruby_engine
// picks this engine or the inline one (inline_engine.cc).
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
#include "sandbox/ruby/engine_shared.hpp"
#include "sandbox/ruby/guest.hpp"
#include "sandbox/ruby/helper.hpp"
#include "sandbox/ruby/wire.hpp"
#include "sandbox/watchdog.hpp"

namespace corral::sandbox {
namespace {

using Clock = std::chrono::steady_clock;
using ruby::kNoFailure;

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
  // False when the helper is gone (a frame past kMaxFrame is never asked
  // for: the callers check its size first).
  bool send(ruby::Writer& frame) { return ruby::send_frame(helper_->fd(), frame); }
  // Why a frame of `size` bytes is not sent: "<what> is N bytes as a frame, ...".
  static std::string too_large(std::string_view what, std::size_t size);

  // One run's state on the host side of the helper.
  struct HelperRun {
    HelperRun(const Options& options, const RunRequest& request)
        : out(options.stdout_limit), err(options.stderr_limit) {
      if (options.timeout) {
        deadline = request.entry + *options.timeout;
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
  ruby::Live live_;
  std::unique_ptr<ruby::HelperProcess> helper_;
  ruby::Counters spare_counters_;
  core::FrameReader inbox_{ruby::kMaxFrame};
};

std::string HelperEngine::too_large(std::string_view what, std::size_t size) {
  return core::frame_too_large(what, size, "the Ruby helper's frame limit", ruby::kMaxFrame);
}

HelperEngine::Wait HelperEngine::next_frame(std::string& body,
                                            std::optional<Clock::time_point> deadline) {
  for (;;) {
    switch (inbox_.next(body)) {
      case core::FrameReader::Status::frame:
        return body.empty() ? Wait::broken : Wait::frame;  // every frame has a type
      case core::FrameReader::Status::oversized:
        return Wait::broken;
      case core::FrameReader::Status::need_more:
        break;
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
  inbox_ = core::FrameReader(ruby::kMaxFrame);
  // A new helper says hello once it is locked down; only then does it get
  // the setup.
  if (helper_ && fresh) greet(run, registry);
  if (helper_ && !run.kill) exchange(run, request, registry);
  {
    std::lock_guard lock(live_.mutex);
    live_.running = false;
  }
  const ruby::Counters& read = end_helper(run, counters);
  ruby::finish_outcome(run.outcome, options_, request, read, run.out.take(), run.err.take(),
                       run.cpu);
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
  const ruby::GuestSetup s = ruby::make_setup(options_, registry);
  setup.u8(s.profile == Profile::permissive ? 1 : 0)
      .u64(s.memory_limit)
      .u64(s.stdout_limit)
      .u64(s.stderr_limit)
      .u64(s.max_tool_calls)
      .u32(static_cast<std::uint32_t>(s.tools.size()));
  for (const std::string& path : s.tools) setup.str(path);
  setup.u32(static_cast<std::uint32_t>(s.snippets.size()));
  for (const Snippet& snippet : s.snippets) setup.str(snippet.name).str(snippet.code);
  if (setup.body_size() > ruby::kMaxFrame) {
    run.end(FailureCode::invalid_request,
            too_large("the sandbox's setup (its tool paths and snippets)", setup.body_size()));
    return;
  }
  if (!send(setup)) run.end(FailureCode::internal, "the Ruby helper process is gone");
}

// Sends the run, then serves the helper's frames until it is done.
void HelperEngine::exchange(HelperRun& run, const RunRequest& request, const Registry& registry) {
  ruby::Writer frame(ruby::Frame::run);
  frame.u8(static_cast<std::uint8_t>(request.kind))
      .str(request.code)
      .str(request.entrypoint)
      .str(request.args_json.empty() ? std::string_view("[]") : request.args_json);
  if (frame.body_size() > ruby::kMaxFrame) {  // refused here; the helper waits for the next
    run.fail(FailureCode::invalid_request,
             too_large("the run (its code and arguments)", frame.body_size()));
    return;
  }
  if (!send(frame)) {
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
    const ruby::ToolOutcome result =
        ruby::invoke_tool(registry.tools[index], std::move(args), answer, run.deadline, live_);
    if (result == ruby::ToolOutcome::timeout || result == ruby::ToolOutcome::cancelled) {
      run.end(result == ruby::ToolOutcome::timeout ? FailureCode::timeout : FailureCode::cancelled,
              "");
      return false;
    }
    ruby::Writer reply(ruby::Frame::answer);
    reply.u8(result == ruby::ToolOutcome::ok ? 1 : 0).str(answer);
    if (reply.body_size() > ruby::kMaxFrame) {  // the guest gets a tool error instead
      const std::size_t size = reply.body_size();
      reply = ruby::Writer(ruby::Frame::answer);
      reply.u8(0).str(too_large("the tool's answer", size));
    }
    if (!send(reply)) run.end(FailureCode::internal, "the Ruby helper process is gone");
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
    ruby::apply_result(run.outcome, result, options_);
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

}  // namespace

std::unique_ptr<Engine> make_ruby_engine(const Options& options, const Hosting& hosting) {
  if (!hosting.may_spawn) return ruby::make_inline_engine(options, hosting.on_stuck);
  return std::make_unique<HelperEngine>(options);
}

}  // namespace corral::sandbox
