// src/core/units.hpp: parsing durations and byte sizes as people type them
// on a command line or in an environment variable ("90s", "64MiB", "none").
//
// Anything else is refused with a message that names the option and says
// which forms are accepted; nothing wraps around, saturates or crashes (huge
// numbers, negative ones, empty text, junk after the unit, bytes that are not
// UTF-8).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace corral::core {

// The widest duration parse_duration accepts: 2^31 - 1 ms (about 24.8 days),
// the widest timeout anywhere in corral, far from where time arithmetic on a
// clock could overflow.
inline constexpr std::chrono::milliseconds kMaxDuration{2'147'483'647};

// The largest size parse_size accepts: 1024 TiB (2^50 bytes), more than any
// machine has and far from where arithmetic on a size could overflow.
inline constexpr std::uint64_t kMaxSize = std::uint64_t{1} << 50;

// A number with a unit: "250ms", "5s", "2m", "1h", "100us", a bare number of
// seconds ("1.5"); or "none" (nullopt). Units are case-sensitive (m is
// minutes); the number may have a fraction, and a fraction of a millisecond
// rounds up ("1.5ms" is 2 ms: corral's durations are whole milliseconds).
// Throws std::invalid_argument naming `what` for anything else, including
// zero, negative values, less than 1 ms and more than kMaxDuration.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text,
                                                        std::string_view what);

// A number of bytes ("1048576", "1048576B"), or a number with a unit, in any
// case: K, M, G, T, Ki, Mi, Gi, Ti, KiB, MiB, GiB, TiB are powers of 1024
// ("64m" and "64MiB" are 67108864 bytes); kB, MB, GB, TB are powers of 1000
// ("64MB" is 64000000 bytes); or "none" (nullopt). A fraction is allowed
// ("1.5GiB") and rounds down to a whole byte. Throws std::invalid_argument
// naming `what` for anything else, including 0 and more than kMaxSize.
std::optional<std::uint64_t> parse_size(std::string_view text, std::string_view what);

// The longest bound corral's C++ API takes (a run's timeout, a queue wait, a
// grace, an interval): a year, far from where adding it to a steady_clock
// reading (nanoseconds in 64 bits: 292 years) could overflow.
inline constexpr std::chrono::milliseconds kMaxBound = std::chrono::hours(365 * 24);

// Throws std::invalid_argument "NAME must be positive and at most 365 days"
// unless 0 < bound <= kMaxBound.
void check_bound(std::chrono::milliseconds bound, std::string_view name);

// A duration as corral's messages spell it, in a form parse_duration reads
// back: "250ms" under a second, "5s" in whole seconds, "1.5s" otherwise.
std::string format_duration(std::chrono::milliseconds duration);

// `text` in double quotes for an error message: at most 64 bytes of it, with
// quotes and backslashes escaped and control bytes and bytes from 0x80 up as
// \xNN, so that a message stays one readable line of valid UTF-8 whatever it
// quotes.
std::string quoted(std::string_view text);

}  // namespace corral::core
