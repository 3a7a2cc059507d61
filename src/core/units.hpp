// src/core/units.hpp: parsing durations and byte sizes as people type them
// on a command line or in an environment variable ("90s", "64MiB", "none").
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace corral::core {

// "250ms", "5s", "2m", "1h", a bare number of seconds ("1.5"), or "none"
// (nullopt). Throws std::invalid_argument naming `what` for anything else,
// including zero, negative and non-finite values.
std::optional<std::chrono::nanoseconds> parse_duration(std::string_view text,
                                                       std::string_view what);

// "1048576", "64KiB", "64MiB", "1GiB", "64kB", "64MB", or "none" (nullopt).
// Throws std::invalid_argument naming `what` for anything else, including 0.
std::optional<std::uint64_t> parse_size(std::string_view text, std::string_view what);

}  // namespace corral::core
