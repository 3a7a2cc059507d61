#include "core/units.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace corral::core {
namespace {

constexpr std::string_view kSizeForms =
    "a size is a number of bytes, or a number with a unit: KiB, MiB, GiB, TiB (also K, M, G, T "
    "or Ki, Mi, Gi, Ti: powers of 1024) or kB, MB, GB, TB (powers of 1000), e.g. 64MiB";
constexpr std::string_view kDurationForms =
    "a duration is a number with a unit: us, ms, s, m or h (e.g. 250ms, 30s, 5m), or a bare "
    "number of seconds";

[[noreturn]] void refuse(std::string_view what, const std::string& message) {
  throw std::invalid_argument(std::string(what) + ": " + message);
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

struct Number {
  std::string_view number;  // digits, an optional fraction and exponent
  bool whole = true;        // neither a fraction nor an exponent
  std::string_view unit;    // what follows (after optional blanks)
};

// Splits "1.5 GiB" into its number and its unit, refusing text that does
// not start with an unsigned decimal number.
Number split(std::string_view text, std::string_view what, std::string_view forms) {
  if (text.empty()) refuse(what, "is empty; " + std::string(forms));
  if (text.front() == '-') refuse(what, "must be greater than zero (or \"none\")");
  std::size_t end = 0;
  std::size_t digits = 0;
  Number n;
  while (end < text.size() && is_digit(text[end])) ++end, ++digits;
  if (end < text.size() && text[end] == '.') {
    n.whole = false;
    ++end;
    while (end < text.size() && is_digit(text[end])) ++end, ++digits;
  }
  if (digits == 0)
    refuse(what, quoted(text) + " does not start with a number; " + std::string(forms));
  // An exponent only when digits follow the 'e' (no unit starts with e).
  if (end < text.size() && (text[end] == 'e' || text[end] == 'E')) {
    std::size_t at = end + 1;
    if (at < text.size() && (text[at] == '+' || text[at] == '-')) ++at;
    if (at < text.size() && is_digit(text[at])) {
      while (at < text.size() && is_digit(text[at])) ++at;
      end = at;
      n.whole = false;
    }
  }
  n.number = text.substr(0, end);
  n.unit = trim(text.substr(end));
  return n;
}

// The number as a double. Out of a double's range it is infinity when too
// large and zero when too small, never an error about the text itself (the
// callers report a bound).
double to_double(std::string_view number) {
  double value = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc::result_out_of_range) return value;
  // Which side: the decimal exponent of the first significant digit.
  const std::size_t e = number.find_first_of("eE");
  const std::string_view mantissa = number.substr(0, e);
  long magnitude = 0;
  const std::size_t first = mantissa.find_first_of("123456789");
  const std::size_t point = std::min(mantissa.find('.'), mantissa.size());
  if (first != std::string_view::npos) {
    magnitude =
        first < point ? static_cast<long>(point - first) : -static_cast<long>(first - point - 1);
  }
  if (e != std::string_view::npos) {
    long exponent = 0;
    const std::string_view digits = number.substr(e + 1);
    const bool negative = !digits.empty() && digits.front() == '-';
    for (char c : digits) {
      if (is_digit(c)) exponent = std::min<long>(exponent * 10 + (c - '0'), 1'000'000);
    }
    magnitude += negative ? -exponent : exponent;
  }
  return magnitude > 0 ? HUGE_VAL : 0.0;
}

// The size unit's multiplier, or 0 when `unit` is none of them.
std::uint64_t size_unit(std::string_view unit) {
  std::string lower;
  for (char c : unit) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (lower.empty() || lower == "b") return 1;
  if (lower.size() > 3) return 0;
  int power = 0;
  switch (lower[0]) {
    case 'k':
      power = 1;
      break;
    case 'm':
      power = 2;
      break;
    case 'g':
      power = 3;
      break;
    case 't':
      power = 4;
      break;
    default:
      return 0;
  }
  const std::string_view rest = std::string_view(lower).substr(1);
  std::uint64_t base = 0;
  if (rest.empty() || rest == "i" || rest == "ib") {
    base = 1024;
  } else if (rest == "b") {
    base = 1000;
  } else {
    return 0;
  }
  std::uint64_t scale = 1;
  for (int i = 0; i < power; ++i) scale *= base;
  return scale;
}

}  // namespace

std::string quoted(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  constexpr std::size_t kShown = 64;
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size() && i < kShown; ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte == '"' || byte == '\\') {
      out += '\\';
      out += static_cast<char>(byte);
    } else if (byte < 0x20 || byte >= 0x7f) {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    } else {
      out += static_cast<char>(byte);
    }
  }
  if (text.size() > kShown) out += "...";
  out += '"';
  return out;
}

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text,
                                                        std::string_view what) {
  text = trim(text);
  if (text == "none") return std::nullopt;
  const Number n = split(text, what, kDurationForms);
  double scale = 0;
  if (n.unit.empty() || n.unit == "s") {
    scale = 1e3;
  } else if (n.unit == "ms") {
    scale = 1;
  } else if (n.unit == "us") {
    scale = 1e-3;
  } else if (n.unit == "m") {
    scale = 60e3;
  } else if (n.unit == "h") {
    scale = 3600e3;
  } else {
    refuse(what, quoted(n.unit) + " is not a duration unit; " + std::string(kDurationForms));
  }
  const double number = to_double(n.number);
  if (number == 0) refuse(what, "must be greater than zero (or \"none\")");
  // A fraction of a millisecond rounds up: a bound is never shorter than
  // the text asked for. A product past a whole number by no more than its
  // own rounding error is that number ("2147483.623s" multiplies to
  // 2147483623.0000002; the fuzzer found it spelled back one more).
  const double exact = number * scale;
  const double below = std::floor(exact);
  const double error = 4 * (std::nextafter(exact, HUGE_VAL) - exact);
  const double millis = exact - below <= error ? below : std::ceil(exact);
  if (!(millis <= static_cast<double>(kMaxDuration.count()))) {
    refuse(what, quoted(text) + " is too long (at most " + std::to_string(kMaxDuration.count()) +
                     "ms, about 24.8 days)");
  }
  if (1 - exact > error) refuse(what, "must be at least 1ms");
  return std::chrono::milliseconds(static_cast<std::int64_t>(millis));
}

void check_bound(std::chrono::milliseconds bound, std::string_view name) {
  if (bound <= std::chrono::milliseconds::zero() || bound > kMaxBound) {
    throw std::invalid_argument(std::string(name) + " must be positive and at most 365 days");
  }
}

std::string format_duration(std::chrono::milliseconds duration) {
  const std::int64_t ms = duration.count();
  if (ms > -1000 && ms < 1000) return std::to_string(ms) + "ms";
  std::string out = std::to_string(ms / 1000);
  if (const std::int64_t fraction = std::abs(ms % 1000); fraction != 0) {
    std::string digits = std::to_string(1000 + fraction).substr(1);  // three, zero-padded
    digits.erase(digits.find_last_not_of('0') + 1);
    out += "." + digits;
  }
  return out + "s";
}

std::optional<std::uint64_t> parse_size(std::string_view text, std::string_view what) {
  text = trim(text);
  if (text == "none") return std::nullopt;
  const Number n = split(text, what, kSizeForms);
  const std::uint64_t scale = size_unit(n.unit);
  if (scale == 0) refuse(what, quoted(n.unit) + " is not a size unit; " + std::string(kSizeForms));
  const std::string too_large = quoted(text) + " is too large (at most 1024TiB)";
  if (n.whole) {
    // Exact integer arithmetic: a double would round 2^53 + 1.
    std::uint64_t count = 0;
    const auto [end, ec] =
        std::from_chars(n.number.data(), n.number.data() + n.number.size(), count);
    if (ec == std::errc::result_out_of_range) refuse(what, too_large);
    if (count == 0) refuse(what, "must be greater than zero (or \"none\")");
    if (count > kMaxSize / scale) refuse(what, too_large);
    return count * scale;
  }
  const double number = to_double(n.number);
  if (number == 0) refuse(what, "must be greater than zero (or \"none\")");
  const double bytes = number * static_cast<double>(scale);
  if (!(bytes <= static_cast<double>(kMaxSize))) refuse(what, too_large);
  if (bytes < 1) refuse(what, "must be at least 1 byte");
  return static_cast<std::uint64_t>(bytes);
}

}  // namespace corral::core
