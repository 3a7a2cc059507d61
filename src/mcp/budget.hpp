// src/mcp/budget.hpp: cutting a tool result to the result budget,
// structurally (arrays and objects keep their head, strings their prefix),
// with markers that say what was cut.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/json.hpp"

namespace corral::mcp {

namespace json = core::json;  // Boost.JSON with corral's writer

// Cut: a value cut to fit, and whether anything was lost.
struct Cut {
  json::value value;
  bool cut = false;
};

// Returns `value` unchanged when its JSON fits in `budget` bytes; otherwise a
// value of the same shape whose JSON is about `budget` bytes: an array keeps
// its first elements and ends with "[cut: N more items]", an object keeps its
// first keys and gains "[cut]": "N more keys", a string keeps a prefix (on a
// UTF-8 boundary) followed by "[cut: N more bytes]".
Cut cut_to_budget(const json::value& value, std::size_t budget);

// `text` shortened to at most about `budget` bytes (on a UTF-8 boundary),
// with a marker naming the bytes cut; sets `cut` when it shortened.
std::string cut_text(std::string_view text, std::size_t budget, bool& cut);

// `text` as the value of a JSON string whose serialized form (quotes and
// escapes included) takes at most about `allowance` bytes: unchanged when it
// fits, else a prefix cut between UTF-8 characters followed by
// "\n[cut: N more bytes]"; sets `cut` when it shortened.
std::string cut_json_string(std::string_view text, std::size_t allowance, bool& cut);

}  // namespace corral::mcp
