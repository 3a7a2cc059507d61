// src/sandbox/v8/platform.hpp: process-wide V8 start-up and the clock the
// hermetic profile freezes.
#pragma once

#include <v8-platform.h>

namespace corral::sandbox::v8engine {

// Initialises V8 once per process (thread-safe) and returns the platform
// whose message loop must be pumped for isolates. Throws corral::SetupError
// if V8 cannot start.
v8::Platform* ensure_v8();

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
