// src/sandbox/ruby/values.hpp: Ruby values <-> JSON text.
//
// Only JSON-representable values cross: nil, true, false, Integer, finite
// Float, UTF-8 String, Symbol (as its name), Array, and Hash with String or
// Symbol keys, nested at most 128 levels. Anything else is refused with a
// path to the culprit ("value[1][\"fn\"] is a Proc"). JSON objects become
// Hashes with String keys.
#pragma once

#include <string>
#include <string_view>

#include <mruby.h>

namespace corral::sandbox::ruby {

inline constexpr int kMaxDepth = 128;

// Appends the JSON form of `value` to `out`; on false, `why` names the
// culprit under `root` (e.g. "value"). Allocates only through mruby's heap
// for nothing: it reads values and calls no Ruby method.
bool to_json(mrb_state* mrb, mrb_value value, std::string& out, std::string& why,
             std::string_view root);

// Builds the Ruby value of JSON `text`; false (and nil) when it is not one
// JSON document. May raise NoMemoryError through mruby.
bool from_json(mrb_state* mrb, std::string_view text, mrb_value& out);

}  // namespace corral::sandbox::ruby
