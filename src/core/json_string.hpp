// src/core/json_string.hpp: writing a JSON string literal.
//
// Header-only and without Boost: the engines' value encoders (V8's built
// with -fno-rtti, mruby's) write guest values to JSON text themselves.
#pragma once

#include <string>
#include <string_view>

namespace corral::core {

// Appends `text` as a JSON string: quotes, the two-character escapes, and
// \u00XX for the other control characters. Bytes from 0x80 up pass through
// (the callers hand over UTF-8).
inline void append_json_string(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (u < 0x20) {
          out += "\\u00";
          out.push_back(kHex[u >> 4]);
          out.push_back(kHex[u & 15]);
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

}  // namespace corral::core
