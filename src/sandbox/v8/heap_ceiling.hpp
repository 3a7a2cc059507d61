// src/sandbox/v8/heap_ceiling.hpp: the isolate's heap backstop for runs
// limited to `memory_limit` bytes. No V8 header: the pool's and the
// sandbox's tests state their memory bounds with it.
//
// Old space is the limit plus 32 MiB (room for the isolate's own baseline),
// young space a quarter of the limit within 2-16 MiB. The run's exact limit
// is checked after every GC and at the end, so a run that fails
// memory_limit may have held more than its limit by then: at most this much
// heap (its ArrayBuffers are refused at the limit itself). usage.memory_peak
// reports what was measured, never clamped (docs/sandbox.md, "Memory").
#pragma once

#include <algorithm>
#include <cstdint>

namespace corral::sandbox::v8engine {

struct HeapCeiling {
  std::uint64_t old_space = 0;
  std::uint64_t young_space = 0;
  std::uint64_t total() const noexcept { return old_space + young_space; }
};

inline HeapCeiling heap_ceiling(std::uint64_t memory_limit) noexcept {
  HeapCeiling ceiling;
  ceiling.old_space =
      std::min<std::uint64_t>(memory_limit, std::uint64_t{1} << 40) + (std::uint64_t{32} << 20);
  ceiling.young_space =
      std::clamp<std::uint64_t>(memory_limit / 4, std::uint64_t{2} << 20, std::uint64_t{16} << 20);
  return ceiling;
}

// The most usage.memory_peak can say for a run limited to `memory_limit`:
// the heap's ceiling plus the ArrayBuffers the limit admits.
inline std::uint64_t highest_memory_peak(std::uint64_t memory_limit) noexcept {
  return heap_ceiling(memory_limit).total() + memory_limit;
}

}  // namespace corral::sandbox::v8engine
