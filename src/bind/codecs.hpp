// src/bind/codecs.hpp: one codec per flag type. A codec publishes the JSON
// Schema of the values it takes and turns a value into `--name=value`
// tokens, refusing anything the command line cannot express faithfully.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.hpp"

namespace corral::bind {

namespace json = core::json;

// Codec: immutable once made; shared between operations and threads.
class Codec {
 public:
  virtual ~Codec() = default;
  // The flag's schema (without description/default, which the binding adds).
  virtual json::object schema() const = 0;
  // Appends one `--flag=value` token per encoded value. Throws
  // std::invalid_argument with a message a caller can act on.
  virtual void encode(std::string_view flag, const json::value& value,
                      std::vector<std::string>& argv) const = 0;
};

// The codec of a built-in type ("bool", "int64", "stringSlice", ...), or null.
std::shared_ptr<const Codec> builtin_codec(std::string_view type);

// Every built-in type name, for docs and table tests.
const std::vector<std::string>& builtin_types();

// A one-string codec narrowed by `constraints` (a JSON object). Throws
// std::invalid_argument if the constraints change "type" or are not an object.
std::shared_ptr<const Codec> text_codec(std::string_view constraints_json);

// Refuses, with std::invalid_argument saying why, JSON text whose parse
// would not be faithful: a key twice in one object, or a number whose double
// is not the value written (1e400, 9007199254740993.0, 1e-400). Syntax errors
// are left to the parse. (input_text.cc)
void check_input_text(std::string_view text);

}  // namespace corral::bind
