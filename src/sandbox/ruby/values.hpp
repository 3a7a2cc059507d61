// src/sandbox/ruby/values.hpp: Ruby values <-> JSON text.
//
// Only JSON-representable values cross: nil, true, false, Integer, finite
// Float, UTF-8 String, Symbol (as its name), Array, and Hash with String or
// Symbol keys, nested at most 128 levels, and at most a bound's bytes as
// JSON. Anything else is refused with a path to the culprit
// ("value[1][\"fn\"] is a Proc"). JSON objects become Hashes with String
// keys.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <mruby.h>

namespace corral::sandbox::ruby {

inline constexpr int kMaxDepth = 128;

enum class JsonStatus { ok, unserializable, too_large };

// Appends the JSON form of `value` to `out`, at most `max_bytes` of it (a
// string is measured before it is copied); otherwise `why` names the culprit
// under `root` (e.g. "value"): what it is, or that it "takes it past N
// bytes". The bytes are the host's, outside mruby's counted heap: the bound
// is what keeps a small value repeated many times ([s] * 10_000) from
// becoming gigabytes of text. Calls no Ruby method.
JsonStatus to_json(mrb_state* mrb, mrb_value value, std::string& out, std::string& why,
                   std::string_view root, std::size_t max_bytes);

// Builds the Ruby value of JSON `text`; false (and nil) when it is not one
// JSON document. May raise NoMemoryError through mruby.
bool from_json(mrb_state* mrb, std::string_view text, mrb_value& out);

}  // namespace corral::sandbox::ruby
