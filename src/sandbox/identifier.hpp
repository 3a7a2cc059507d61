// src/sandbox/identifier.hpp: the one rule for names the guest sees (tool
// path segments, snippet names, entry points).
#pragma once

#include <string_view>

namespace corral::sandbox {

// True for an ASCII JavaScript identifier of 1..128 characters.
inline bool is_identifier(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

}  // namespace corral::sandbox
