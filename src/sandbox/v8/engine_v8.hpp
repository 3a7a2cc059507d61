// src/sandbox/v8/engine_v8.hpp: the V8 engine behind Sandbox.
//
// One isolate per engine, a fresh context (with its own microtask queue) per
// run. The run's state lives in RunState, reachable from callbacks through
// the isolate's data slot while the run is active.
//
// Spare context: creating a context (deserialising V8's snapshot, applying
// the global template, installing console and the hermetic bootstrap) is
// most of a trivial run's cost. After each run the engine's preparer thread
// builds the next run's context, off the critical path of that run, while
// the sandbox is idle. The spare is brand new, no run has touched it, and a
// run takes it (or builds its own if none is ready) and drops it at its end.
#pragma once

#include <v8.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "sandbox/engine.hpp"
#include "sandbox/output.hpp"
#include "sandbox/v8/allocator.hpp"
#include "sandbox/v8/heap_ceiling.hpp"
#include "sandbox/v8/values.hpp"

namespace corral::sandbox::v8engine {

struct RunContext;  // sandbox/v8/bindings.hpp

// The most of a run's value, a tool argument or a console line that is
// copied out of the isolate when the run has no memory_limit; with one, the
// limit is the bound (a run may not make its host hold more than that).
inline constexpr std::uint64_t kMaxHostCopyBytes = std::uint64_t{1} << 30;

// RunState: everything one run owns. Lives on the run's stack.
struct RunState {
  RunState(const Options& options, const Registry& registry)
      : options(options),
        registry(registry),
        out(options.stdout_limit),
        err(options.stderr_limit),
        mailbox(std::make_shared<Mailbox>()) {}

  const Options& options;
  const Registry& registry;
  CappedOutput out;
  CappedOutput err;
  std::shared_ptr<Mailbox> mailbox;
  std::uint64_t tool_calls = 0;
  std::uint64_t next_call_id = 1;
  std::map<std::uint64_t, v8::Global<v8::Promise::Resolver>> pending;

  // The verdict of whoever stopped the run (watchdog, allocator, heap
  // callback, cancel, tool budget). The first writer wins.
  std::atomic<int> verdict{-1};
  std::string verdict_message;  // written only by the run's own thread

  // Memory accounting (bytes past the baseline at run entry).
  std::int64_t heap_baseline = 0;
  std::int64_t buffer_baseline = 0;
  std::uint64_t memory_peak = 0;

  bool stop(FailureCode code) {
    int expected = -1;
    return verdict.compare_exchange_strong(expected, static_cast<int>(code));
  }
  std::optional<FailureCode> stopped() const {
    const int v = verdict.load();
    if (v < 0) return std::nullopt;
    return static_cast<FailureCode>(v);
  }
};

// FreshContext: a context no run has used, with its own microtask queue.
struct FreshContext {
  v8::Global<v8::Context> context;
  std::unique_ptr<v8::MicrotaskQueue> queue;  // null: none
};

class V8Engine final : public Engine {
 public:
  explicit V8Engine(const Options& options);
  ~V8Engine() override;

  RunOutcome run(const RunRequest& request, const Registry& registry) override;
  void cancel() override;

  // For callbacks.
  static V8Engine* from(v8::Isolate* isolate) {
    return static_cast<V8Engine*>(isolate->GetData(0));
  }
  RunState* current() const noexcept { return current_.load(); }
  v8::Isolate* isolate() const noexcept { return isolate_; }
  const Options& options() const noexcept { return options_; }
  v8::Local<v8::ObjectTemplate> console_template() { return console_template_.Get(isolate_); }
  v8::Local<v8::Private> failure_code_key();

  // Throws a guest-visible Error whose failure code is `code` if uncaught.
  void throw_coded(FailureCode code, const std::string& message);
  v8::Local<v8::Value> coded_error(FailureCode code, const std::string& message);

  // Stops the run with `code` (first verdict wins) and terminates the guest.
  void stop(FailureCode code);

  // Bounds for turning `run`'s values into JSON on the host.
  static JsonBounds json_bounds(const RunState& run) {
    return {
        .max_bytes = static_cast<std::size_t>(run.options.memory_limit.value_or(kMaxHostCopyBytes)),
        .stopped = [&run] { return run.stopped().has_value(); }};
  }

  // Scripts compiled once per isolate and bound to each run's context.
  struct CompiledScripts {
    bool compiled = false;
    v8::Global<v8::UnboundScript> guard_bootstrap;
    v8::Global<v8::UnboundScript> hermetic_bootstrap;
    std::vector<v8::Global<v8::UnboundScript>> snippets;  // empty Global: did not compile
    std::vector<std::string> snippet_errors;
  };
  CompiledScripts& scripts() noexcept { return scripts_; }

 private:
  void build_templates(const Registry& registry);
  // Builds a context with corral's globals into `out`. The caller holds the
  // isolate's lock and a HandleScope. False if that was stopped or failed.
  bool make_context(FreshContext& out);
  // Asks the preparer thread (started on first use) for a spare context.
  void request_spare();
  // Runs the isolate's pending platform tasks without letting them run
  // guest JavaScript. The caller holds the isolate's lock.
  void pump_tasks();
  void prepare_loop();
  std::int64_t heap_used();
  void sample_memory(RunState& run);
  // The steps of run(), in order.
  void begin_run(RunState& run, const RunRequest& request);
  FreshContext take_context(RunState& run, RunOutcome& outcome);
  void run_in_context(RunState& run, const RunRequest& request, const Registry& registry,
                      v8::Local<v8::Context> context, v8::MicrotaskQueue& queue,
                      std::chrono::steady_clock::time_point deadline, RunOutcome& outcome);
  void await_result(RunContext& rc, std::chrono::steady_clock::time_point deadline);
  void wait_for_answers(RunState& run, std::chrono::steady_clock::time_point deadline);
  void copy_value(RunContext& rc);
  void end_run(RunState& run);
  void record_verdict(const RunState& run, RunOutcome& outcome) const;
  void fill_data(RunState& run, const RunRequest& request, double cpu_start,
                 RunOutcome& outcome) const;
  void deliver_answers(RunState& run, v8::Local<v8::Context> context);
  void restore_heap_limit();

  static size_t near_heap_limit(void* data, size_t current_limit, size_t initial_limit);
  static void after_gc(v8::Isolate* isolate, v8::GCType type, v8::GCCallbackFlags flags,
                       void* data);

  Options options_;
  v8::Platform* platform_;
  std::unique_ptr<CountingAllocator> allocator_;
  v8::Isolate* isolate_ = nullptr;
  std::size_t heap_limit_ = 0;
  bool heap_limit_raised_ = false;
  std::atomic<RunState*> current_{nullptr};
  std::mutex cancel_mutex_;  // orders cancel() against the end of a run

  // Guarded by the isolate's lock (v8::Locker).
  FreshContext spare_;

  // The preparer thread and its wake-up state (guarded by prepare_mutex_).
  std::mutex prepare_mutex_;
  std::condition_variable prepare_wake_;
  bool prepare_wanted_ = false;
  bool shutting_down_ = false;
  std::thread preparer_;
  // Set (by a run; runs are serialised) when the preparer thread could not
  // start: runs then build their own contexts and pump V8's tasks themselves.
  bool preparer_failed_ = false;

  bool templates_built_ = false;
  CompiledScripts scripts_;
  v8::Global<v8::ObjectTemplate> global_template_;
  v8::Global<v8::ObjectTemplate> console_template_;
  v8::Global<v8::Private> failure_code_key_;
};

}  // namespace corral::sandbox::v8engine
