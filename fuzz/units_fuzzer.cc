// fuzz/units_fuzzer.cc: core::parse_duration, core::format_duration,
// core::parse_size, core::quoted.
//
// Invariants: anything is a value in range, "none", or std::invalid_argument
// whose message is valid UTF-8 of bounded length; a duration read is spelled
// by format_duration in a form that reads back as the same duration;
// quoted() is valid UTF-8, one line, and bounded whatever it quotes.
#include <stdexcept>

#include "core/units.hpp"
#include "fuzz_util.hpp"

using corral::fuzz::fail;

namespace {

void check_message(const std::invalid_argument& e) {
  const std::string_view message = e.what();
  if (!corral::fuzz::is_utf8(message)) fail("error message is not UTF-8", message);
  if (message.size() > 1024) fail("error message is unbounded", message);
}

// Both parsers take text with surrounding spaces and tabs ("none\t").
std::string_view trimmed(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = corral::fuzz::text_of(data, size);

  try {
    if (auto d = corral::core::parse_duration(text, "--timeout")) {
      if (d->count() <= 0 || *d > corral::core::kMaxDuration) fail("duration out of range", text);
      const std::string spelled = corral::core::format_duration(*d);
      if (corral::core::parse_duration(spelled, "spelled") != d) fail("format_duration", spelled);
    } else if (trimmed(text) != "none") {
      fail("nullopt for something other than none", text);
    }
  } catch (const std::invalid_argument& e) {
    check_message(e);
  }

  try {
    if (auto s = corral::core::parse_size(text, "--memory-limit")) {
      if (*s == 0 || *s > corral::core::kMaxSize) fail("size out of range", text);
    } else if (trimmed(text) != "none") {
      fail("nullopt for something other than none", text);
    }
  } catch (const std::invalid_argument& e) {
    check_message(e);
  }

  const std::string q = corral::core::quoted(text);
  if (!corral::fuzz::is_utf8(q)) fail("quoted() is not UTF-8", q);
  if (q.find('\n') != std::string::npos) fail("quoted() spans lines", q);
  if (q.size() > 64 * 4 + 8) fail("quoted() is unbounded", q);
  return 0;
}
