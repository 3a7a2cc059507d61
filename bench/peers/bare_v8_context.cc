// The floor under corral's fresh context: V8 10.2 (Debian's libnode108) with
// nothing of corral's. Each iteration creates a context with its own
// microtask queue, compiles and runs "1+1", and drops the context, the way
// corral's run does, but with no global template, console, bootstrap,
// watchdog, memory accounting or result conversion.
//
//   bench/peers/bare_v8_context.sh [iterations] [extra V8 flags...]
//
// Prints the mean wall and CPU time per iteration.
#include <libplatform/libplatform.h>
#include <time.h>
#include <v8.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

namespace {

double cpu_us(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 5000;
  std::string flags;
  for (int i = 2; i < argc; ++i) flags += std::string(argv[i]) + " ";
  v8::V8::SetFlagsFromString(flags.c_str(), flags.size());
  v8::V8::InitializeICU();
  std::unique_ptr<v8::Platform> platform = v8::platform::NewDefaultPlatform();
  v8::V8::InitializePlatform(platform.get());
  v8::V8::Initialize();

  std::unique_ptr<v8::ArrayBuffer::Allocator> allocator(
      v8::ArrayBuffer::Allocator::NewDefaultAllocator());
  v8::Isolate::CreateParams params;
  params.array_buffer_allocator = allocator.get();
  params.constraints.set_max_old_generation_size_in_bytes(std::size_t{96} << 20);
  params.constraints.set_max_young_generation_size_in_bytes(std::size_t{16} << 20);
  v8::Isolate* isolate = v8::Isolate::New(params);

  // Each run compiles a text no earlier run had, as corral's benchmarks do
  // (bench/unique_source.hpp): V8's compile cache would otherwise serve it.
  std::uint64_t serial = 0;
  auto run_once = [&] {
    const std::string source = "/* run " + std::to_string(++serial) + " */ 1+1";
    v8::Locker locker(isolate);
    v8::Isolate::Scope isolate_scope(isolate);
    v8::HandleScope handles(isolate);
    std::unique_ptr<v8::MicrotaskQueue> queue =
        v8::MicrotaskQueue::New(isolate, v8::MicrotasksPolicy::kExplicit);
    v8::Local<v8::Context> context = v8::Context::New(isolate, nullptr, {}, {}, {}, queue.get());
    {
      v8::Context::Scope context_scope(context);
      v8::Local<v8::Script> script =
          v8::Script::Compile(
              context, v8::String::NewFromUtf8(isolate, source.c_str(), v8::NewStringType::kNormal,
                                               static_cast<int>(source.size()))
                           .ToLocalChecked())
              .ToLocalChecked();
      if (script->Run(context).ToLocalChecked()->Int32Value(context).FromJust() != 2) std::abort();
    }
    isolate->ContextDisposedNotification();
    while (v8::platform::PumpMessageLoop(platform.get(), isolate)) {
    }
  };

  for (int i = 0; i < 200; ++i) run_once();
  const auto start = std::chrono::steady_clock::now();
  const double thread_start = cpu_us(CLOCK_THREAD_CPUTIME_ID);
  const double process_start = cpu_us(CLOCK_PROCESS_CPUTIME_ID);
  for (int i = 0; i < iterations; ++i) run_once();
  const double wall =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  // The process's CPU counts V8's platform threads (GC, compiler) too, as
  // corral's benchmarks and the isolated-vm peer count theirs.
  std::printf(
      "bare V8 %s context + eval(\"1+1\"), flags [%s]: %.1f us wall, %.1f us CPU per run "
      "(%.1f us on the running thread)\n",
      v8::V8::GetVersion(), flags.c_str(), wall / iterations,
      (cpu_us(CLOCK_PROCESS_CPUTIME_ID) - process_start) / iterations,
      (cpu_us(CLOCK_THREAD_CPUTIME_ID) - thread_start) / iterations);
  isolate->Dispose();
  v8::V8::Dispose();
  v8::V8::DisposePlatform();
  return 0;
}
