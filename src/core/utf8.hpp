// src/core/utf8.hpp: corral's one UTF-8 decoder and the policy built on it.
//
// Text that corral did not make (command output, guest output, upstream tool
// answers, fuzzed input) may hold bytes that are not UTF-8. The policy, used
// by every layer before such text becomes JSON:
//   - each maximal ill-formed subpart (Unicode 15, section 3.9, "U+FFFD
//     substitution of maximal subparts", as WHATWG and ICU do) becomes one
//     U+FFFD, and the result records that it happened (`*_replaced`);
//   - a budget cuts only between characters, never inside one.
//
// Example:
//   std::string text = "ok \xff";
//   bool replaced = core::replace_invalid_utf8(text);  // true; text == "ok \uFFFD"
//   std::size_t n = core::utf8_cut(u8"h\u00e9", 2);     // 1: "h", not half of "é"
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace corral::core {

// The replacement character U+FFFD in UTF-8.
inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

// Utf8Step: what starts at one position of a byte string. `length` bytes
// (at least 1) form either one valid character (`valid`) or one maximal
// ill-formed subpart; `incomplete` marks a subpart that is a valid prefix of a
// character cut by the end of the text.
struct Utf8Step {
  std::size_t length = 1;
  bool valid = true;
  bool incomplete = false;
};

// utf8_step: decodes the sequence at `text[at]` (`at < text.size()`). Rejects
// overlong forms, surrogates (U+D800..U+DFFF), code points past U+10FFFF and
// the bytes 0xC0, 0xC1, 0xF5..0xFF; checks the second byte's range before
// counting continuations, so "\xE0\x80" is two subparts, not one.
inline Utf8Step utf8_step(std::string_view text, std::size_t at) noexcept {
  const auto c = static_cast<unsigned char>(text[at]);
  if (c < 0x80) return {1, true, false};
  std::size_t need = 0;
  unsigned char low = 0x80;  // allowed range of the second byte
  unsigned char high = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    need = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 2;
    if (c == 0xE0) low = 0xA0;   // overlong below U+0800
    if (c == 0xED) high = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 3;
    if (c == 0xF0) low = 0x90;   // overlong below U+10000
    if (c == 0xF4) high = 0x8F;  // past U+10FFFF
  } else {
    return {1, false, false};  // continuation byte, 0xC0, 0xC1, 0xF5..0xFF
  }
  std::size_t n = 1;
  while (n <= need) {
    if (at + n >= text.size()) return {n, false, true};
    const auto d = static_cast<unsigned char>(text[at + n]);
    const bool in_range = n == 1 ? (d >= low && d <= high) : (d & 0xC0) == 0x80;
    if (!in_range) return {n, false, false};
    ++n;
  }
  return {n, true, false};
}

// is_valid_utf8: true iff `text` is valid UTF-8 throughout.
inline bool is_valid_utf8(std::string_view text) noexcept {
  for (std::size_t i = 0; i < text.size();) {
    const Utf8Step step = utf8_step(text, i);
    if (!step.valid) return false;
    i += step.length;
  }
  return true;
}

// append_valid_utf8: appends `text` to `out` with each ill-formed subpart
// replaced by U+FFFD; returns true iff it replaced anything. Valid runs are
// copied whole.
inline bool append_valid_utf8(std::string& out, std::string_view text) {
  bool replaced = false;
  std::size_t run = 0;  // start of the valid run not yet copied
  for (std::size_t i = 0; i < text.size();) {
    const Utf8Step step = utf8_step(text, i);
    if (!step.valid) {
      out.append(text.substr(run, i - run));
      out.append(kReplacementCharacter);
      replaced = true;
      run = i + step.length;
    }
    i += step.length;
  }
  out.append(text.substr(run));
  return replaced;
}

// replace_invalid_utf8: `text` made valid in place (see append_valid_utf8);
// returns true iff it replaced anything. Valid text is left untouched and not
// copied. Replacement can grow the text: one byte becomes three.
inline bool replace_invalid_utf8(std::string& text) {
  if (is_valid_utf8(text)) return false;
  std::string out;
  out.reserve(text.size() + text.size() / 2);
  append_valid_utf8(out, text);
  text = std::move(out);
  return true;
}

// utf8_cut: where to cut `text` to keep at most `max` bytes without splitting
// a character: `max` itself unless a valid character (or the valid prefix of
// one that the end of `text` cuts) straddles it, then that character's start.
// Backs off at most three bytes, so ill-formed text is never emptied.
inline std::size_t utf8_cut(std::string_view text, std::size_t max) noexcept {
  if (max >= text.size()) return text.size();
  const std::size_t earliest = max >= 3 ? max - 3 : 0;
  for (std::size_t start = max; start > earliest;) {
    --start;
    const auto c = static_cast<unsigned char>(text[start]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    const Utf8Step step = utf8_step(text, start);
    const bool whole_or_prefix = step.valid || step.incomplete;
    return whole_or_prefix && start + step.length > max ? start : max;
  }
  return max;
}

// utf8_complete: the length of `text` without a trailing valid prefix of a
// character that the end of `text` cuts (0 to 3 bytes shorter). For a buffer
// cut by a budget, so the cut falls on a character boundary.
inline std::size_t utf8_complete(std::string_view text) noexcept {
  const std::size_t earliest = text.size() >= 3 ? text.size() - 3 : 0;
  for (std::size_t start = text.size(); start > earliest;) {
    --start;
    const auto c = static_cast<unsigned char>(text[start]);
    if ((c & 0xC0) == 0x80) continue;
    return utf8_step(text, start).incomplete ? start : text.size();
  }
  return text.size();
}

}  // namespace corral::core
