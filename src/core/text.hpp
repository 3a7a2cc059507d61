// src/core/text.hpp: small text helpers every layer needs: ASCII lowering
// (header names, search words) and unguessable ids.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>

namespace corral::core {

// `text` with A-Z lowered; every other byte (UTF-8 sequences included) as it
// was, whatever the locale.
inline std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// 128 bits from the kernel (std::random_device reads getrandom() on Linux)
// as 32 lowercase hex digits: an id (a session's, a kept result's) that
// nobody can guess.
inline std::string random_hex128() {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::random_device random;
  std::string out;
  out.reserve(32);
  for (int word = 0; word < 4; ++word) {
    const std::uint32_t bits = random();
    for (int shift = 28; shift >= 0; shift -= 4) out += kDigits[(bits >> shift) & 0xF];
  }
  return out;
}

}  // namespace corral::core
