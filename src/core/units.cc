#include "core/units.hpp"

#include <cctype>
#include <cmath>
#include <stdexcept>
#include <string>

namespace corral::core {
namespace {

struct NumberAndSuffix {
  double number;
  std::string_view suffix;
};

NumberAndSuffix split_number(std::string_view text, std::string_view what) {
  std::size_t end = 0;
  while (end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.' ||
          text[end] == '-' || text[end] == '+' || text[end] == 'e' || text[end] == 'E')) {
    // An 'e' is part of the number only when a digit follows it (so "1e3" is
    // a number but the "e" of a suffix never is).
    if ((text[end] == 'e' || text[end] == 'E') &&
        (end + 1 >= text.size() || !std::isdigit(static_cast<unsigned char>(text[end + 1])))) {
      break;
    }
    ++end;
  }
  std::string number_text(text.substr(0, end));
  if (number_text.empty()) {
    throw std::invalid_argument(std::string(what) + ": \"" + std::string(text) +
                                "\" does not start with a number");
  }
  std::size_t used = 0;
  double number = 0;
  try {
    number = std::stod(number_text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != number_text.size()) {
    throw std::invalid_argument(std::string(what) + ": \"" + std::string(text) +
                                "\" is not a number");
  }
  if (!std::isfinite(number)) {
    throw std::invalid_argument(std::string(what) + ": must be finite");
  }
  if (number <= 0) {
    throw std::invalid_argument(std::string(what) + ": must be greater than zero (or \"none\")");
  }
  std::string_view suffix = text.substr(end);
  while (!suffix.empty() && suffix.front() == ' ') suffix.remove_prefix(1);
  return {number, suffix};
}

}  // namespace

std::optional<std::chrono::nanoseconds> parse_duration(std::string_view text,
                                                       std::string_view what) {
  if (text == "none") return std::nullopt;
  auto [number, suffix] = split_number(text, what);
  double scale = 0;
  if (suffix.empty() || suffix == "s")
    scale = 1e9;
  else if (suffix == "ms")
    scale = 1e6;
  else if (suffix == "us")
    scale = 1e3;
  else if (suffix == "m")
    scale = 60e9;
  else if (suffix == "h")
    scale = 3600e9;
  else {
    throw std::invalid_argument(std::string(what) + ": unknown duration unit \"" +
                                std::string(suffix) + "\" (use ms, s, m or h)");
  }
  const double nanos = number * scale;
  if (nanos > 1e18) throw std::invalid_argument(std::string(what) + ": too large");
  if (nanos < 1) throw std::invalid_argument(std::string(what) + ": must be at least 1ns");
  return std::chrono::nanoseconds(static_cast<std::int64_t>(nanos));
}

std::optional<std::uint64_t> parse_size(std::string_view text, std::string_view what) {
  if (text == "none") return std::nullopt;
  auto [number, suffix] = split_number(text, what);
  double scale = 0;
  if (suffix.empty() || suffix == "B")
    scale = 1;
  else if (suffix == "KiB" || suffix == "K")
    scale = 1024.0;
  else if (suffix == "MiB" || suffix == "M")
    scale = 1024.0 * 1024;
  else if (suffix == "GiB" || suffix == "G")
    scale = 1024.0 * 1024 * 1024;
  else if (suffix == "kB")
    scale = 1e3;
  else if (suffix == "MB")
    scale = 1e6;
  else if (suffix == "GB")
    scale = 1e9;
  else {
    throw std::invalid_argument(std::string(what) + ": unknown size unit \"" + std::string(suffix) +
                                "\" (use B, KiB, MiB or GiB)");
  }
  const double bytes = number * scale;
  if (bytes > 1.8e19) throw std::invalid_argument(std::string(what) + ": too large");
  if (bytes < 1) throw std::invalid_argument(std::string(what) + ": must be at least 1 byte");
  return static_cast<std::uint64_t>(bytes);
}

}  // namespace corral::core
