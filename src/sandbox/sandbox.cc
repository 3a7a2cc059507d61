#include "corral/sandbox.hpp"

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>

#include "core/json.hpp"
#include "core/units.hpp"
#include "sandbox/engine.hpp"

#include "sandbox/hosted.hpp"
#include "sandbox/identifier.hpp"
#include "sandbox/ruby/engine_ruby.hpp"
#include "sandbox/tool_paths.hpp"

namespace corral::sandbox {

ToolError::~ToolError() = default;

namespace {

// The first answer of a call wins; later ones, and answers to a run that has
// ended (its mailbox gone or closed), are refused.
bool answer(const std::shared_ptr<ToolReply::State>& state, bool ok, std::string payload) {
  if (!state || state->settled.exchange(true)) return false;
  auto mailbox = state->mailbox.lock();
  return mailbox && mailbox->post({state->call_id, ok, std::move(payload)});
}

}  // namespace

bool ToolReply::resolve(std::string json) const { return answer(state_, true, std::move(json)); }

bool ToolReply::reject(std::string message) const {
  return answer(state_, false, std::move(message));
}

class Sandbox::Impl {
 public:
  Impl(Options options, const Hosting& hosting) : options_(std::move(options)) {
    validate(options_);
    engine_ = options_.language == Language::ruby ? make_ruby_engine(options_, hosting)
                                                  : make_v8_engine(options_);
  }

  void add_tool(std::string path, SyncTool sync, AsyncTool async) {
    std::lock_guard lock(turn_mutex_);
    if (sealed_) throw std::invalid_argument("bind: tools cannot be bound after the first run");
    if (!sync && !async) throw std::invalid_argument("bind: " + path + " has no function");
    std::vector<std::string> bound;
    for (const ToolEntry& tool : registry_->tools) bound.push_back(tool.path);
    check_tool_path(options_.language, path, bound);
    registry_->tools.push_back(ToolEntry{std::move(path), std::move(sync), std::move(async)});
  }

  void add_snippet(std::string name, std::string code) {
    std::lock_guard lock(turn_mutex_);
    if (sealed_)
      throw std::invalid_argument("preload: snippets cannot be added after the first run");
    if (!is_identifier(name)) {
      throw std::invalid_argument("preload: snippet name \"" + name +
                                  "\" is not a JavaScript identifier");
    }
    for (const Snippet& snippet : registry_->snippets) {
      if (snippet.name == name) {
        throw std::invalid_argument("preload: a snippet named " + name + " already exists");
      }
    }
    registry_->snippets.push_back(Snippet{std::move(name), std::move(code)});
  }

  // Waits for the Sandbox (see Options::queue_timeout), then runs. The run's
  // own timeout starts when it has the Sandbox.
  Execution run(RunRequest request) {
    Turn turn(*this);
    request.entry = std::chrono::steady_clock::now();
    request.take_early_cancel = [this] {
      std::lock_guard cancel_lock(cancel_mutex_);
      return std::exchange(cancel_pending_, false);
    };
    RunOutcome outcome = engine_->run(request, *registry_);
    clear_pending_cancel();  // one that came during the run was for it
    last_trapped_ = outcome.failure == FailureCode::timeout ||
                    outcome.failure == FailureCode::memory_limit ||
                    outcome.failure == FailureCode::cancelled;
    if (!outcome.failure) return Execution(std::move(outcome.data));
    throw_failure(*outcome.failure, outcome.message,
                  std::make_shared<const Execution>(std::move(outcome.data)));
  }

  // Cancels what runs and waits, and waits for every caller to leave, so
  // that no run outlives the engine (docs/sandbox.md, "Threads").
  ~Impl() {
    std::unique_lock lock(turn_mutex_);
    closing_ = true;
    if (running()) cancel_including_next();
    turn_free_.notify_all();
    turn_free_.wait(lock, [this] { return callers_ == 0; });
  }

  void cancel() { engine_->cancel(); }
  void cancel_including_next() {
    {
      std::lock_guard lock(cancel_mutex_);
      cancel_pending_ = true;
    }
    engine_->cancel();
  }
  void clear_pending_cancel() {
    std::lock_guard lock(cancel_mutex_);
    cancel_pending_ = false;
  }
  bool last_run_trapped() const noexcept { return last_trapped_.load(); }
  const Options& options() const noexcept { return options_; }

 private:
  // Turn: one run at a time holds the Sandbox. Taking it refuses re-entry
  // from the running thread (a sync tool), gives up after queue_timeout, and
  // gives up when the Sandbox is being destroyed.
  class Turn {
   public:
    explicit Turn(Impl& impl) : impl_(impl) {
      std::unique_lock lock(impl_.turn_mutex_);
      if (impl_.runner_ == std::this_thread::get_id()) {
        throw_failure(FailureCode::invalid_request,
                      "a run cannot start on the Sandbox from inside one of its own runs (a "
                      "tool called it)");
      }
      if (impl_.closing_) throw_failure(FailureCode::cancelled, "the Sandbox is being destroyed");
      ++impl_.callers_;
      const auto free = [this] { return !impl_.running() || impl_.closing_; };
      bool got = true;
      if (impl_.options_.queue_timeout) {
        got = impl_.turn_free_.wait_for(lock, *impl_.options_.queue_timeout, free);
      } else {
        impl_.turn_free_.wait(lock, free);
      }
      if (impl_.closing_ || !got) {
        leave(lock);
        if (impl_.closing_) throw_failure(FailureCode::cancelled, "the Sandbox is being destroyed");
        throw_failure(FailureCode::busy,
                      "another run held the Sandbox for longer than its queue_timeout of " +
                          core::format_duration(*impl_.options_.queue_timeout));
      }
      impl_.runner_ = std::this_thread::get_id();
      impl_.sealed_ = true;
    }
    ~Turn() {
      std::unique_lock lock(impl_.turn_mutex_);
      impl_.runner_ = {};
      leave(lock);
    }
    Turn(const Turn&) = delete;
    Turn& operator=(const Turn&) = delete;

   private:
    void leave(std::unique_lock<std::mutex>&) {
      --impl_.callers_;
      impl_.turn_free_.notify_all();
    }
    Impl& impl_;
  };
  bool running() const { return runner_ != std::thread::id{}; }  // under turn_mutex_

  Options options_;
  std::unique_ptr<Engine> engine_;
  std::mutex turn_mutex_;
  std::condition_variable turn_free_;  // the turn was given back, or closing_ was set
  std::thread::id runner_;             // the thread whose run holds the turn; none when free
  int callers_ = 0;                    // runs holding or awaiting the turn
  bool closing_ = false;               // ~Impl has begun
  bool sealed_ = false;
  std::atomic<bool> last_trapped_{false};
  std::mutex cancel_mutex_;
  bool cancel_pending_ = false;  // cancel_including_next() before the run could take it
  std::shared_ptr<Registry> registry_ = std::make_shared<Registry>();
};

Sandbox::Sandbox(Options options) : impl_(std::make_unique<Impl>(std::move(options), Hosting{})) {}
Sandbox::Sandbox(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Sandbox::~Sandbox() = default;

Sandbox& Sandbox::bind(std::string path, SyncTool tool) {
  impl_->add_tool(std::move(path), std::move(tool), nullptr);
  return *this;
}

Sandbox& Sandbox::bind_async(std::string path, AsyncTool tool) {
  impl_->add_tool(std::move(path), nullptr, std::move(tool));
  return *this;
}

Sandbox& Sandbox::preload(std::string name, std::string code) {
  impl_->add_snippet(std::move(name), std::move(code));
  return *this;
}

Execution Sandbox::eval(std::string_view code) {
  RunRequest request;
  request.kind = RunRequest::Kind::eval;
  request.code = std::string(code);
  return impl_->run(std::move(request));
}

Execution Sandbox::execute(std::string_view code) {
  RunRequest request;
  request.kind = RunRequest::Kind::execute;
  request.code = std::string(code);
  return impl_->run(std::move(request));
}

Execution Sandbox::run(std::string_view entrypoint, std::string_view args_json) {
  if (!is_identifier(entrypoint)) {
    throw std::invalid_argument("run: entrypoint \"" + std::string(entrypoint) +
                                "\" is not a JavaScript identifier");
  }
  if (!core::is_json_array(args_json)) {
    throw std::invalid_argument("run: args must be a JSON array");
  }
  RunRequest request;
  request.kind = RunRequest::Kind::call;
  request.entrypoint = std::string(entrypoint);
  request.args_json = std::string(args_json);
  return impl_->run(std::move(request));
}

void Sandbox::cancel() { impl_->cancel(); }
bool Sandbox::last_run_trapped() const noexcept { return impl_->last_run_trapped(); }
const Options& Sandbox::options() const noexcept { return impl_->options(); }

std::unique_ptr<Sandbox> Hosted::make(Options options, Hosting hosting) {
  return std::unique_ptr<Sandbox>(
      new Sandbox(std::make_unique<Sandbox::Impl>(std::move(options), hosting)));
}
void Hosted::cancel_including_next(Sandbox& sandbox) { sandbox.impl_->cancel_including_next(); }
void Hosted::clear_pending_cancel(Sandbox& sandbox) { sandbox.impl_->clear_pending_cancel(); }

std::string thrown_tool_message(const std::string& path) {
  try {
    throw;
  } catch (const ToolError& e) {
    return path + ": " + e.what();
  } catch (const std::exception& e) {
    return path + " failed: " + e.what();
  } catch (...) {
    return path + " failed";
  }
}

bool call_sync_tool(const ToolEntry& tool, std::string_view args, std::string& out) {
  try {
    out = tool.sync(args);
    return true;
  } catch (...) {
    out = thrown_tool_message(tool.path);
    return false;
  }
}

void start_async_tool(const ToolEntry& tool, std::string args, ToolReply reply) {
  try {
    tool.async(std::move(args), reply);
  } catch (...) {
    reply.reject(thrown_tool_message(tool.path));
  }
}

}  // namespace corral::sandbox
