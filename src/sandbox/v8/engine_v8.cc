#include "sandbox/v8/engine_v8.hpp"

#include <libplatform/libplatform.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <system_error>

#include "core/units.hpp"
#include "core/utf8.hpp"
#include "sandbox/v8/bindings.hpp"
#include "sandbox/v8/platform.hpp"
#include "sandbox/v8/values.hpp"
#include "sandbox/watchdog.hpp"

namespace corral::sandbox::v8engine {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxMessageBytes = 16 * 1024;

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// The JS stack limit for the calling thread: V8 must stop a deep recursion
// well before the thread's real stack ends, whatever thread the embedder
// runs us on.
uintptr_t stack_limit_for_this_thread() {
  thread_local uintptr_t stack_low = 0;
  if (stack_low == 0) {
    pthread_attr_t attr;
    void* address = nullptr;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      pthread_attr_getstack(&attr, &address, &size);
      pthread_attr_destroy(&attr);
    }
    stack_low = reinterpret_cast<uintptr_t>(address);
  }
  const auto here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
#if defined(__SANITIZE_ADDRESS__)
  constexpr uintptr_t kMargin = 1024 * 1024;
#else
  constexpr uintptr_t kMargin = 256 * 1024;
#endif
  constexpr uintptr_t kMaxJsStack = 2 * 1024 * 1024;
  if (stack_low == 0 || here <= stack_low + kMargin + 64 * 1024) return here - 64 * 1024;
  const uintptr_t usable = here - stack_low - kMargin;
  return here - std::min(usable, kMaxJsStack);
}

std::string bounded(std::string text) {
  if (text.size() > kMaxMessageBytes) {
    text.resize(core::utf8_cut(text, kMaxMessageBytes));
    text += "... (message truncated)";
  }
  return text;
}

}  // namespace

namespace {

std::atomic<int> out_of_memory_exit{0};

void exit_out_of_memory(const char* location, bool is_heap_oom) {
  char line[256];
  const int n =
      std::snprintf(line, sizeof line, "corral: out of memory (%s%s)\n",
                    is_heap_oom ? "JavaScript heap, " : "", location ? location : "unknown");
  if (n > 0) {
    [[maybe_unused]] const ssize_t ignored =
        ::write(2, line, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof line - 1));
  }
  ::_exit(out_of_memory_exit.load());
}

}  // namespace

void set_out_of_memory_exit_code(int code) noexcept { out_of_memory_exit.store(code); }

V8Engine::V8Engine(const Options& options) : options_(options) {
  platform_ = ensure_v8();
  allocator_ = std::make_unique<CountingAllocator>();
  v8::Isolate::CreateParams params;
  params.array_buffer_allocator = allocator_.get();
  params.snapshot_blob = private_snapshot();
  if (options_.memory_limit) {
    // The heap limit is a backstop with room for the isolate's own baseline;
    // the run's exact limit is checked after every GC and at the end.
    const HeapCeiling ceiling = heap_ceiling(*options_.memory_limit);
    params.constraints.set_max_old_generation_size_in_bytes(ceiling.old_space);
    params.constraints.set_max_young_generation_size_in_bytes(ceiling.young_space);
  }
  isolate_ = v8::Isolate::New(params);
  if (!isolate_) throw SetupError(FailureCode::setup_error, "V8 could not create an isolate");
  isolate_->SetData(0, this);
  if (out_of_memory_exit.load() != 0) isolate_->SetOOMErrorHandler(&exit_out_of_memory);
  isolate_->AddNearHeapLimitCallback(&V8Engine::near_heap_limit, this);
  isolate_->AddGCEpilogueCallback(&V8Engine::after_gc, this);
  isolate_->SetAllowAtomicsWait(false);
  isolate_->SetCaptureStackTraceForUncaughtExceptions(false);
  allocator_->on_refused = [this] { stop(FailureCode::memory_limit); };
  v8::HeapStatistics heap;
  isolate_->GetHeapStatistics(&heap);
  heap_limit_ = heap.heap_size_limit();
}

V8Engine::~V8Engine() {
  {
    std::lock_guard lock(prepare_mutex_);
    shutting_down_ = true;
  }
  prepare_wake_.notify_one();
  if (preparer_.joinable()) preparer_.join();
  {
    v8::Locker locker(isolate_);
    v8::Isolate::Scope scope(isolate_);
    spare_.context.Reset();
    spare_.queue.reset();
    global_template_.Reset();
    console_template_.Reset();
    failure_code_key_.Reset();
    scripts_.guard_bootstrap.Reset();
    scripts_.hermetic_bootstrap.Reset();
    scripts_.snippets.clear();
  }
  v8::platform::NotifyIsolateShutdown(platform_, isolate_);
  isolate_->Dispose();
}

v8::Local<v8::Private> V8Engine::failure_code_key() { return failure_code_key_.Get(isolate_); }

v8::Local<v8::Value> V8Engine::coded_error(FailureCode code, const std::string& message) {
  v8::Local<v8::Value> error = code == FailureCode::tool_argument
                                   ? v8::Exception::TypeError(v8_string(isolate_, message))
                                   : v8::Exception::Error(v8_string(isolate_, message));
  v8::Local<v8::Context> context = isolate_->GetCurrentContext();
  if (error->IsObject()) {
    error.As<v8::Object>()
        ->SetPrivate(context, failure_code_key(), v8_string(isolate_, to_string(code)))
        .FromMaybe(false);
  }
  return error;
}

void V8Engine::throw_coded(FailureCode code, const std::string& message) {
  isolate_->ThrowException(coded_error(code, message));
}

void V8Engine::stop(FailureCode code) {
  RunState* run = current_.load();
  if (!run) return;
  if (run->stop(code)) isolate_->TerminateExecution();
  run->mailbox->poke();
}

void V8Engine::cancel() {
  std::lock_guard lock(cancel_mutex_);
  RunState* run = current_.load();
  if (!run) return;
  if (run->stop(FailureCode::cancelled)) isolate_->TerminateExecution();
  run->mailbox->poke();
}

size_t V8Engine::near_heap_limit(void* data, size_t current_limit, size_t initial_limit) {
  auto* engine = static_cast<V8Engine*>(data);
  engine->stop(FailureCode::memory_limit);
  engine->heap_limit_raised_ = true;
  // Generous headroom so the allocation in flight succeeds instead of
  // aborting the process; the guest is terminated at its next check.
  return current_limit + (std::size_t{2} << 30);
}

void V8Engine::after_gc(v8::Isolate* isolate, v8::GCType, v8::GCCallbackFlags, void* data) {
  auto* engine = static_cast<V8Engine*>(data);
  if (RunState* run = engine->current()) engine->sample_memory(*run);
}

std::int64_t V8Engine::heap_used() {
  // What GetHeapStatistics' used_heap_size adds up, without the rest of
  // GetHeapStatistics: that walks every native context, and the dead ones
  // of earlier runs linger until a full GC.
  std::int64_t used = 0;
  v8::HeapSpaceStatistics space;
  for (std::size_t i = 0, n = isolate_->NumberOfHeapSpaces(); i < n; ++i) {
    if (isolate_->GetHeapSpaceStatistics(&space, i)) {
      used += static_cast<std::int64_t>(space.space_used_size());
    }
  }
  return used;
}

void V8Engine::sample_memory(RunState& run) {
  const std::int64_t heap_delta = std::max<std::int64_t>(0, heap_used() - run.heap_baseline);
  const std::int64_t buffer_delta =
      std::max<std::int64_t>(0, allocator_->peak() - run.buffer_baseline);
  const auto usage = static_cast<std::uint64_t>(heap_delta + buffer_delta);
  run.memory_peak = std::max(run.memory_peak, usage);
  if (options_.memory_limit && usage > *options_.memory_limit) stop(FailureCode::memory_limit);
}

void V8Engine::restore_heap_limit() {
  isolate_->LowMemoryNotification();
  isolate_->RemoveNearHeapLimitCallback(&V8Engine::near_heap_limit, heap_limit_);
  isolate_->AddNearHeapLimitCallback(&V8Engine::near_heap_limit, this);
  heap_limit_raised_ = false;
}

void V8Engine::build_templates(const Registry& registry) {
  failure_code_key_.Reset(isolate_, v8::Private::New(isolate_, v8_string(isolate_, "corral.code")));
  global_template_.Reset(isolate_, make_global_template(isolate_, registry));
  console_template_.Reset(isolate_, make_console_template(isolate_));
  templates_built_ = true;
}

void V8Engine::pump_tasks() {
  // Tasks run outside any run, so no guest JavaScript may run in them: no
  // watchdog would stop it. GC tasks run no JavaScript; the one task that
  // would (a FinalizationRegistry cleanup) has nothing to do, as guests get
  // no FinalizationRegistry (install_globals). Should any other task try,
  // the termination requested before each task stops it at its first
  // instruction, and the bound ends a task that keeps reposting itself.
  constexpr int kMaxTasks = 256;
  for (int i = 0; i < kMaxTasks; ++i) {
    isolate_->TerminateExecution();
    if (!v8::platform::PumpMessageLoop(platform_, isolate_)) break;
  }
  isolate_->CancelTerminateExecution();
}

bool V8Engine::make_context(FreshContext& out) {
  std::unique_ptr<v8::MicrotaskQueue> queue =
      v8::MicrotaskQueue::New(isolate_, v8::MicrotasksPolicy::kExplicit);
  v8::Local<v8::Context> context =
      v8::Context::New(isolate_, nullptr, global_template_.Get(isolate_), {}, {}, queue.get());
  if (context.IsEmpty()) return false;
  v8::Context::Scope context_scope(context);
  context->AllowCodeGenerationFromStrings(options_.profile == Profile::permissive);
  if (!install_globals(*this, context)) return false;
  out.context.Reset(isolate_, context);
  out.queue = std::move(queue);
  return true;
}

void V8Engine::request_spare() {
  if (preparer_failed_) return;
  {
    std::lock_guard lock(prepare_mutex_);
    prepare_wanted_ = true;
    if (!preparer_.joinable()) {
      try {
        preparer_ = std::thread([this] { prepare_loop(); });
      } catch (const std::system_error&) {
        preparer_failed_ = true;
      }
      return;
    }
  }
  prepare_wake_.notify_one();
}

void V8Engine::prepare_loop() {
  std::unique_lock lock(prepare_mutex_);
  for (;;) {
    prepare_wake_.wait(lock, [this] { return prepare_wanted_ || shutting_down_; });
    if (shutting_down_) return;
    prepare_wanted_ = false;
    lock.unlock();
    {
      v8::Locker locker(isolate_);
      v8::Isolate::Scope isolate_scope(isolate_);
      v8::HandleScope handles(isolate_);
      // The tasks the last run left behind (GC steps, a FinalizationRegistry
      // cleanup) run here, not in the next run.
      pump_tasks();
      if (!spare_.queue) {
        FreshContext fresh;
        if (make_context(fresh)) spare_ = std::move(fresh);
      }
    }
    lock.lock();
  }
}

void V8Engine::deliver_answers(RunState& run, v8::Local<v8::Context> context) {
  std::deque<Mailbox::Answer> answers;
  {
    std::lock_guard lock(run.mailbox->mutex);
    answers.swap(run.mailbox->answers);
  }
  for (auto& answer : answers) {
    auto it = run.pending.find(answer.call_id);
    if (it == run.pending.end()) continue;
    v8::Local<v8::Promise::Resolver> resolver = it->second.Get(isolate_);
    run.pending.erase(it);
    if (answer.ok) {
      v8::Local<v8::Value> value;
      bool parsed = false;
      {
        v8::TryCatch inner(isolate_);
        parsed = v8::JSON::Parse(context, v8_string(isolate_, answer.payload)).ToLocal(&value);
      }
      if (parsed) {
        resolver->Resolve(context, value).FromMaybe(false);
      } else {
        resolver
            ->Reject(context, coded_error(FailureCode::tool_error, "a tool returned invalid JSON"))
            .FromMaybe(false);
      }
    } else {
      resolver->Reject(context, coded_error(FailureCode::tool_error, answer.payload))
          .FromMaybe(false);
    }
  }
}

namespace {

// The first failure a run records is its failure.
void record_failure(RunOutcome& outcome, FailureCode code, std::string message) {
  if (outcome.failure) return;
  outcome.failure = code;
  outcome.message = std::move(message);
}

}  // namespace

RunOutcome V8Engine::run(const RunRequest& request, const Registry& registry) {
  RunOutcome outcome;
  RunState run(options_, registry);
  const double cpu_start = thread_cpu_seconds();
  const Clock::time_point deadline =
      options_.timeout ? request.entry + *options_.timeout : Clock::time_point::max();
  {
    v8::Locker locker(isolate_);
    v8::Isolate::Scope isolate_scope(isolate_);
    v8::HandleScope handles(isolate_);
    isolate_->SetStackLimit(stack_limit_for_this_thread());
    isolate_->CancelTerminateExecution();
    if (!templates_built_) build_templates(registry);
    FrozenClockScope clock(options_.profile == Profile::hermetic);

    begin_run(run, request);
    Watchdog::Id watchdog = 0;
    if (options_.timeout) {
      watchdog = Watchdog::instance().arm(deadline, [this, &run] {
        if (run.stop(FailureCode::timeout)) isolate_->TerminateExecution();
        run.mailbox->poke();
      });
    }
    FreshContext fresh = take_context(run, outcome);
    if (fresh.queue) {
      v8::Local<v8::Context> context = fresh.context.Get(isolate_);
      fresh.context.Reset();
      run_in_context(run, request, registry, context, *fresh.queue, deadline, outcome);
    }
    if (options_.timeout) Watchdog::instance().disarm(watchdog);
    end_run(run);
  }
  // The next run's context is built while this one's caller reads its result.
  request_spare();
  record_verdict(run, outcome);
  fill_data(run, request, cpu_start, outcome);
  return outcome;
}

// Memory is counted from here; from here cancel() reaches the run.
void V8Engine::begin_run(RunState& run, const RunRequest& request) {
  run.heap_baseline = heap_used();
  run.buffer_baseline = allocator_->live();
  allocator_->reset_peak();
  allocator_->set_ceiling(options_.memory_limit
                              ? run.buffer_baseline +
                                    static_cast<std::int64_t>(std::min<std::uint64_t>(
                                        *options_.memory_limit, std::uint64_t{1} << 60))
                              : -1);
  current_.store(&run);
  // A cancel that came before the run began is applied now.
  if (request.take_early_cancel && request.take_early_cancel()) cancel();
}

// The spare the preparer built while we were idle, or a new one; no queue
// if none could be made (the failure is recorded unless a verdict stopped it).
FreshContext V8Engine::take_context(RunState& run, RunOutcome& outcome) {
  FreshContext fresh = std::move(spare_);
  spare_ = FreshContext();
  if (fresh.queue) return fresh;
  if (make_context(fresh)) {
    // Memory is counted past the fresh context, as with a spare.
    run.heap_baseline = heap_used();
    run.memory_peak = 0;
  } else if (!run.stopped()) {
    record_failure(outcome, FailureCode::internal, "V8 could not create a context for the run");
  }
  return fresh;
}

void V8Engine::run_in_context(RunState& run, const RunRequest& request, const Registry& registry,
                              v8::Local<v8::Context> context, v8::MicrotaskQueue& queue,
                              Clock::time_point deadline, RunOutcome& outcome) {
  v8::Context::Scope context_scope(context);
  v8::TryCatch try_catch(isolate_);
  RunContext rc{*this, run, context, queue, try_catch, outcome, v8::Local<v8::Value>()};
  const bool ran = run_guest(rc, request, registry);
  if (ran && !run.stopped()) {
    if (rc.result->IsPromise()) await_result(rc, deadline);
    // What the run holds now counts before its value is copied out.
    if (!outcome.failure && !run.stopped()) sample_memory(run);
    if (!outcome.failure && !run.stopped()) copy_value(rc);
  } else if (!run.stopped() && try_catch.HasCaught() && !outcome.failure) {
    classify_caught(rc);
  }
  if (!run.stopped()) sample_memory(run);
}

// Runs microtasks and delivers tool answers until rc.result's promise
// settles, the run is stopped, or nothing left could settle it.
void V8Engine::await_result(RunContext& rc, Clock::time_point deadline) {
  RunState& run = rc.run;
  v8::Local<v8::Promise> promise = rc.result.As<v8::Promise>();
  for (;;) {
    rc.queue.PerformCheckpoint(isolate_);
    if (run.stopped()) return;
    if (promise->State() != v8::Promise::kPending) break;
    if (run.pending.empty()) {
      record_failure(rc.outcome, FailureCode::guest_error,
                     "the run's promise never settled: it awaits nothing a tool can answer");
      return;
    }
    wait_for_answers(run, deadline);
    deliver_answers(run, rc.context);
  }
  if (promise->State() == v8::Promise::kRejected) {
    classify_exception(rc, promise->Result(), v8::Local<v8::Message>());
  } else {
    rc.result = promise->Result();
  }
}

// Blocks until a tool answer or a wake-up arrives; past the deadline the
// run is stopped as timed out.
void V8Engine::wait_for_answers(RunState& run, Clock::time_point deadline) {
  std::unique_lock lock(run.mailbox->mutex);
  auto ready = [&] { return !run.mailbox->answers.empty() || run.mailbox->wake; };
  if (deadline != Clock::time_point::max()) {
    if (!run.mailbox->ready.wait_until(lock, deadline, ready)) {
      lock.unlock();
      stop(FailureCode::timeout);
      lock.lock();
    }
  } else {
    run.mailbox->ready.wait(lock, ready);
  }
  run.mailbox->wake = false;
}

// The run's settled value as JSON text into rc.outcome, or why it has none.
void V8Engine::copy_value(RunContext& rc) {
  RunState& run = rc.run;
  std::string json;
  std::string why;
  const JsonStatus status = write_json(rc.context, rc.result, json, why, json_bounds(run));
  if (status == JsonStatus::ok) {
    rc.outcome.data.value = std::move(json);
  } else if (status == JsonStatus::unserializable) {
    record_failure(rc.outcome, FailureCode::unserializable_value,
                   "the run's value has no JSON form: " + why);
  } else if (status == JsonStatus::too_large) {
    run.verdict_message = "the run's value is too large as JSON: " + why +
                          (options_.memory_limit ? " (its memory limit)" : "");
    stop(FailureCode::memory_limit);
  } else if (!run.stopped()) {
    classify_caught(rc);
  }
}

// Detaches the run from cancel(), callbacks and the allocator. The caller
// still holds the isolate's lock.
void V8Engine::end_run(RunState& run) {
  {
    std::lock_guard lock(cancel_mutex_);
    current_.store(nullptr);
  }
  {
    std::lock_guard lock(run.mailbox->mutex);
    run.mailbox->closed = true;
  }
  allocator_->set_ceiling(-1);
  run.pending.clear();
  isolate_->CancelTerminateExecution();
  isolate_->ContextDisposedNotification();
  if (heap_limit_raised_) restore_heap_limit();
  if (preparer_failed_) pump_tasks();
}

// A verdict (timeout, memory, cancel, a tool budget) is the run's failure,
// whatever the guest threw as it was stopped.
void V8Engine::record_verdict(const RunState& run, RunOutcome& outcome) const {
  const std::optional<FailureCode> verdict = run.stopped();
  if (!verdict) return;
  outcome.failure.reset();
  switch (*verdict) {
    case FailureCode::timeout:
      record_failure(outcome, *verdict,
                     "the run exceeded its timeout of " + core::format_duration(*options_.timeout));
      break;
    case FailureCode::memory_limit:
      record_failure(outcome, *verdict,
                     !run.verdict_message.empty()
                         ? run.verdict_message
                         : "the run exceeded its memory limit of " +
                               std::to_string(*options_.memory_limit) + " bytes");
      break;
    case FailureCode::cancelled:
      record_failure(outcome, *verdict, "the run was cancelled");
      break;
    default:
      record_failure(outcome, *verdict,
                     run.verdict_message.empty() ? "the run was stopped" : run.verdict_message);
  }
}

// Output, usage and the failed flag: what every run reports, failed or not.
void V8Engine::fill_data(RunState& run, const RunRequest& request, double cpu_start,
                         RunOutcome& outcome) const {
  // Messages are bounded once, here, whoever wrote them.
  outcome.message = bounded(std::move(outcome.message));
  ExecutionData& data = outcome.data;
  data.failed = outcome.failure.has_value();
  if (data.failed) data.value = "null";
  data.stdout_truncated = run.out.truncated();
  data.stderr_truncated = run.err.truncated();
  data.usage.output_bytes = run.out.offered() + run.err.offered();
  data.stdout_text = run.out.take();
  data.stderr_text = run.err.take();
  data.usage.tool_calls = run.tool_calls;
  data.usage.memory_peak = run.memory_peak;
  data.usage.cpu_time = thread_cpu_seconds() - cpu_start;
  data.usage.wall_time = std::chrono::duration<double>(Clock::now() - request.entry).count();
}

}  // namespace corral::sandbox::v8engine

namespace corral::sandbox {
void set_out_of_memory_exit(int code) noexcept { v8engine::set_out_of_memory_exit_code(code); }

void skip_private_snapshot() noexcept { v8engine::set_private_snapshot(false); }
}  // namespace corral::sandbox
