// src/sandbox/v8/platform.hpp: process-wide V8 start-up and the clock the
// hermetic profile freezes.
#pragma once

#include <v8-platform.h>

namespace v8 {
class StartupData;
}

namespace corral::sandbox::v8engine {

// Initialises V8 once per process (thread-safe) and returns the platform
// whose message loop must be pumped for isolates. Throws corral::SetupError
// if V8 cannot start.
v8::Platform* ensure_v8();

// Whether ensure_v8 makes this process's own startup snapshot (see
// private_snapshot). Read once, by the first ensure_v8; later calls change
// nothing. On by default.
void set_private_snapshot(bool enabled) noexcept;

// The startup snapshot every isolate of this process is created from, or
// null (V8's built-in one, rehashed for each context). It is made once by
// ensure_v8 from V8's own, under a hash seed drawn for this process, so its
// contexts deserialise without V8 rehashing every table into a new seed
// (about an eighth of a context's cost), while the seed stays secret: never
// the one compiled into the library.
v8::StartupData* private_snapshot();

// While alive on a thread, Date.now() and new Date() on that thread read the
// Unix epoch. The watchdog's clock is unaffected.
class FrozenClockScope {
 public:
  explicit FrozenClockScope(bool freeze);
  ~FrozenClockScope();
  FrozenClockScope(const FrozenClockScope&) = delete;
  FrozenClockScope& operator=(const FrozenClockScope&) = delete;

 private:
  bool previous_;
};

}  // namespace corral::sandbox::v8engine
