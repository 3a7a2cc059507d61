// bench/unique_source.hpp: each run's code as real traffic sends it, a text
// the engine has not compiled before.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "corral/language.hpp"

namespace corral::bench {

// `source` made new: a leading comment with a number no earlier call in
// this process had. V8 caches compiled code per isolate by source text, and
// real traffic rarely sends the same text twice, so a benchmark that reuses
// one source measures the cache (about 100 us less per run than a request
// pays). Every benchmark passes each run's code through this unless its
// name says the source repeats.
inline std::string unique_source(std::string_view source,
                                 Language language = Language::javascript) {
  static std::atomic<std::uint64_t> serial{0};
  const std::string n = std::to_string(serial.fetch_add(1, std::memory_order_relaxed) + 1);
  if (language == Language::ruby) return "# run " + n + "\n" + std::string(source);
  return "/* run " + n + " */ " + std::string(source);
}

}  // namespace corral::bench
