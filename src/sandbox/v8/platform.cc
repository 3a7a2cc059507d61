#include "sandbox/v8/platform.hpp"

#include <libplatform/libplatform.h>
#include <v8.h>

#include <sys/random.h>

#include <atomic>
#include <cerrno>
#include <memory>
#include <mutex>

#include "corral/failure.hpp"

namespace corral::sandbox::v8engine {
namespace {

thread_local bool clock_frozen = false;
std::atomic<bool> snapshot_wanted{true};
v8::StartupData* snapshot = nullptr;

// ClockPlatform delegates everything to V8's default platform except the
// wall clock, which V8 reads for Date: frozen threads see the epoch.
class ClockPlatform final : public v8::Platform {
 public:
  explicit ClockPlatform(std::unique_ptr<v8::Platform> inner) : inner_(std::move(inner)) {}

  v8::Platform* inner() const { return inner_.get(); }

  v8::PageAllocator* GetPageAllocator() override { return inner_->GetPageAllocator(); }
  void OnCriticalMemoryPressure() override { inner_->OnCriticalMemoryPressure(); }
  bool OnCriticalMemoryPressure(size_t length) override {
    return inner_->OnCriticalMemoryPressure(length);
  }
  int NumberOfWorkerThreads() override { return inner_->NumberOfWorkerThreads(); }
  std::shared_ptr<v8::TaskRunner> GetForegroundTaskRunner(v8::Isolate* isolate) override {
    return inner_->GetForegroundTaskRunner(isolate);
  }
  void CallOnWorkerThread(std::unique_ptr<v8::Task> task) override {
    inner_->CallOnWorkerThread(std::move(task));
  }
  void CallBlockingTaskOnWorkerThread(std::unique_ptr<v8::Task> task) override {
    inner_->CallBlockingTaskOnWorkerThread(std::move(task));
  }
  void CallLowPriorityTaskOnWorkerThread(std::unique_ptr<v8::Task> task) override {
    inner_->CallLowPriorityTaskOnWorkerThread(std::move(task));
  }
  void CallDelayedOnWorkerThread(std::unique_ptr<v8::Task> task, double delay_in_seconds) override {
    inner_->CallDelayedOnWorkerThread(std::move(task), delay_in_seconds);
  }
  bool IdleTasksEnabled(v8::Isolate* isolate) override { return inner_->IdleTasksEnabled(isolate); }
  std::unique_ptr<v8::JobHandle> PostJob(v8::TaskPriority priority,
                                         std::unique_ptr<v8::JobTask> job_task) override {
    return inner_->PostJob(priority, std::move(job_task));
  }
  double MonotonicallyIncreasingTime() override { return inner_->MonotonicallyIncreasingTime(); }
  double CurrentClockTimeMillis() override {
    return clock_frozen ? 0.0 : inner_->CurrentClockTimeMillis();
  }
  StackTracePrinter GetStackTracePrinter() override { return inner_->GetStackTracePrinter(); }
  v8::TracingController* GetTracingController() override { return inner_->GetTracingController(); }
  void DumpWithoutCrashing() override { inner_->DumpWithoutCrashing(); }

 private:
  std::unique_ptr<v8::Platform> inner_;
};

// V8 seeds every isolate (hash seeds, Math.random in permissive runs) from
// /dev/urandom; a locked-down worker may not open it, and V8 would then
// fall back to a seed from the clock. getrandom needs no file.
bool fill_from_getrandom(unsigned char* buffer, size_t length) {
  size_t filled = 0;
  while (filled < length) {
    const ssize_t n = ::getrandom(buffer + filled, length - filled, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    filled += static_cast<size_t>(n);
  }
  return true;
}

// A startup snapshot of V8's default context made here, so it carries the
// hash seed this process drew (the creator's isolate is deserialised from
// V8's built-in snapshot and rehashed into a fresh seed, as every isolate
// is by default). Isolates made from it need no rehash, and V8 is told not
// to: --no-rehash-snapshot applies to every later deserialisation, which is
// why every isolate of the process must then be made from this blob (one
// from the built-in snapshot would keep the library's public seed).
v8::StartupData* make_private_snapshot() {
  v8::StartupData blob{};
  {
    v8::SnapshotCreator creator;
    v8::Isolate* isolate = creator.GetIsolate();
    {
      v8::HandleScope handles(isolate);
      creator.SetDefaultContext(v8::Context::New(isolate));
    }
    blob = creator.CreateBlob(v8::SnapshotCreator::FunctionCodeHandling::kClear);
  }
  if (!blob.data || blob.raw_size <= 0) {
    delete[] blob.data;
    return nullptr;
  }
  const char flag[] = "--no-rehash-snapshot";
  v8::V8::SetFlagsFromString(flag, sizeof(flag) - 1);
  return new v8::StartupData(blob);
}

}  // namespace

void set_private_snapshot(bool enabled) noexcept { snapshot_wanted.store(enabled); }

v8::StartupData* private_snapshot() {
  ensure_v8();
  return snapshot;
}

v8::Platform* ensure_v8() {
  static std::once_flag once;
  static ClockPlatform* platform = nullptr;
  std::call_once(once, [] {
    // WebAssembly and SharedArrayBuffer are not offered to guests: wasm
    // memory is reserved outside the counting ArrayBuffer allocator, and
    // shared memory plus Atomics.wait would let a guest block its thread.
    // Flags are process-wide and must be set before the first isolate.
    // --no-validate-asm: asm.js runs as ordinary JavaScript, and V8 then
    // skips building the (unexposed) WebAssembly namespace in every new
    // context, about a tenth of a fresh context's cost.
    const char flags[] = "--no-expose-wasm --no-harmony-sharedarraybuffer --no-validate-asm";
    v8::V8::SetFlagsFromString(flags, sizeof(flags) - 1);
    v8::V8::SetEntropySource(fill_from_getrandom);
    v8::V8::InitializeICU();
    // Leaked on purpose: V8 cannot be re-initialised after disposal, and
    // isolates may be destroyed during static destruction.
    platform = new ClockPlatform(v8::platform::NewDefaultPlatform());
    v8::V8::InitializePlatform(platform);
    if (!v8::V8::Initialize()) {
      platform = nullptr;
      return;
    }
    // Leaked with the platform: isolates read from it while they live.
    if (snapshot_wanted.load()) snapshot = make_private_snapshot();
  });
  if (!platform) throw SetupError(FailureCode::setup_error, "V8 could not be initialised");
  return platform->inner();
}

FrozenClockScope::FrozenClockScope(bool freeze) : previous_(clock_frozen) { clock_frozen = freeze; }
FrozenClockScope::~FrozenClockScope() { clock_frozen = previous_; }

}  // namespace corral::sandbox::v8engine
