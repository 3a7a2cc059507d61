// src/bind/codecs.hpp: one codec per flag type. A codec publishes the JSON
// Schema of the values it takes and turns a value into `--name=value` (or
// `--name value`, `-n value`) tokens, refusing anything the command line
// cannot express faithfully.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.hpp"

namespace corral::bind {

namespace json = core::json;

// Spelling: how one flag is written on the command line. From a bare name:
// `--name=value`.
struct Spelling {
  Spelling(std::string_view name) : option("--" + std::string(name)) {}  // NOLINT: implicit
  Spelling(const char* name) : Spelling(std::string_view(name)) {}       // NOLINT: implicit
  Spelling(std::string option_text, bool separate_value)
      : option(std::move(option_text)), separate(separate_value) {}

  std::string option;     // "--name", "-n"
  bool separate = false;  // `option value` (two tokens) rather than `option=value`
};

// Codec: immutable once made; shared between operations and threads.
class Codec {
 public:
  virtual ~Codec() = default;
  // The flag's schema (without description/default, which the binding adds).
  virtual json::object schema() const = 0;
  // Appends the tokens of one value (`--flag=value` per encoded value, or
  // the option and the value as two tokens when the spelling is separate).
  // Throws std::invalid_argument with a message a caller can act on.
  virtual void encode(const Spelling& flag, const json::value& value,
                      std::vector<std::string>& argv) const = 0;
  // False for a flag written with no value (`switch`).
  virtual bool takes_value() const { return true; }
};

// The codec of a built-in type ("bool", "int64", "stringSlice", ...), or null.
std::shared_ptr<const Codec> builtin_codec(std::string_view type);

// Every built-in type name, for docs and table tests.
const std::vector<std::string>& builtin_types();

// A one-string codec narrowed by `constraints` (a JSON object). Throws
// std::invalid_argument if the constraints change "type" or are not an object.
std::shared_ptr<const Codec> text_codec(std::string_view constraints_json);

// `inner` narrowed by JSON Schema `constraints` (an object): "enum",
// "pattern" (RE2: linear time), "minimum", "maximum", "minLength",
// "maxLength" are enforced before a call and published; any other keyword is
// only published. They apply to the value, or to each element of a list
// flag. Throws std::invalid_argument for constraints that change "type",
// do not fit the inner type (a pattern on a number, an enum value the type
// refuses) or narrow a map flag.
std::shared_ptr<const Codec> narrowed(std::shared_ptr<const Codec> inner,
                                      std::string_view constraints_json);

// Refuses, with std::invalid_argument saying why, JSON text whose parse
// would not be faithful: a key twice in one object, or a number whose double
// is not the value written (1e400, 9007199254740993.0, 1e-400). Syntax errors
// are left to the parse. (input_text.cc)
void check_input_text(std::string_view text);

}  // namespace corral::bind
