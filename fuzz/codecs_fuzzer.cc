// fuzz/codecs_fuzzer.cc: the bind codecs on hostile values, and text codecs
// on hostile constraints (patterns included).
//
// Input: byte 0 picks a built-in type written `--flag=value`, the same type
// written `--flag value` (separate), or, past those, a type narrowed by
// constraints that are the first line (patterns included; from 200 on a
// string, through `text_codec`); the rest is the JSON value. Invariants: encode()
// either appends well-formed tokens without NUL bytes (`--flag=...`, or
// `--flag` and a value that starts with '-' only if it is a number) or
// throws std::invalid_argument with a bounded message; making a narrowed
// codec either works or throws std::invalid_argument. The call input's
// pre-check (bind::check_input_text: duplicate keys, numbers no double
// holds) throws only std::invalid_argument; a value it passes never encodes
// to an infinite or NaN float (`--flag=inf`).
#include <cstdlib>
#include <stdexcept>

#include "bind/codecs.hpp"
#include "fuzz_util.hpp"

namespace json = corral::core::json;
using corral::fuzz::fail;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const auto& types = corral::bind::builtin_types();
  std::string_view rest = corral::fuzz::text_of(data + 1, size - 1);
  std::shared_ptr<const corral::bind::Codec> codec;
  const std::size_t n = types.size();
  // From 200 on: a string narrowed (the text codec, as a manifest's
  // codecs give it); 2n to 199: the other types narrowed.
  const std::string& type = data[0] >= 200 ? std::string("string") : types[data[0] % n];
  const bool separate = data[0] >= n && data[0] < 2 * n;
  codec = corral::bind::builtin_codec(type);
  if (!codec) fail("a listed type has no codec");
  if (data[0] >= 2 * n) {
    const std::size_t newline = rest.find('\n');
    const std::string_view constraints = rest.substr(0, newline);
    rest = newline == std::string_view::npos ? std::string_view{} : rest.substr(newline + 1);
    try {
      codec = type == "string" ? corral::bind::text_codec(constraints)
                               : corral::bind::narrowed(codec, constraints);
    } catch (const std::invalid_argument& e) {
      if (std::string_view(e.what()).size() > 4096) fail("an unbounded error message");
      return 0;
    }
  }
  (void)json::serialize(codec->schema());

  const bool float_type = type.find("float") != std::string::npos;
  bool exact = true;
  try {
    corral::bind::check_input_text(rest);
  } catch (const std::invalid_argument& e) {
    if (std::string_view(e.what()).size() > 4096) fail("an unbounded error message");
    exact = false;
  }
  boost::system::error_code ec;
  const json::value value = json::parse(json::string_view(rest.data(), rest.size()), ec);
  if (ec) return 0;
  std::vector<std::string> argv;
  try {
    codec->encode(
        separate ? corral::bind::Spelling("--flag", true) : corral::bind::Spelling("flag"), value,
        argv);
  } catch (const std::invalid_argument& e) {
    if (std::string_view(e.what()).size() > 4096) fail("an unbounded error message");
    return 0;
  }
  for (const std::string& token : argv) {
    if (separate && token != "--flag") {
      // A value: it may not pass for an option.
      char* end = nullptr;
      if (token.starts_with("-") &&
          (std::strtod(token.c_str(), &end), end != token.c_str() + token.size())) {
        fail("a separate value that reads as an option", token);
      }
      if (token.find('\0') != std::string::npos) fail("a NUL byte in a value", token);
      continue;
    }
    if (token.rfind("--flag", 0) != 0) fail("a token that is not --flag", token);
    if (token.find('\0') != std::string::npos) fail("a NUL byte in a token", token);
    if (exact && float_type &&
        (token.find("inf") != std::string::npos || token.find("nan") != std::string::npos)) {
      fail("a non-finite number passed the exact check", token);
    }
  }
  return 0;
}
