// fuzz/codecs_fuzzer.cc: the bind codecs on hostile values, and text codecs
// on hostile constraints (patterns included).
//
// Input: byte 0 picks a built-in type (or, past the last, a text codec whose
// constraints are the first line); the rest is the JSON value. Invariants:
// encode() either appends well-formed `--flag=...` tokens without NUL bytes
// or throws std::invalid_argument with a bounded message; making a text codec
// either works or throws std::invalid_argument. The call input's pre-check
// (bind::check_input_text: duplicate keys, numbers no double holds) throws
// only std::invalid_argument; a value it passes never encodes to an infinite
// or NaN float (`--flag=inf`).
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
  if (data[0] < types.size()) {
    codec = corral::bind::builtin_codec(types[data[0]]);
    if (!codec) fail("a listed type has no codec");
  } else {
    const std::size_t newline = rest.find('\n');
    const std::string_view constraints = rest.substr(0, newline);
    rest = newline == std::string_view::npos ? std::string_view{} : rest.substr(newline + 1);
    try {
      codec = corral::bind::text_codec(constraints);
    } catch (const std::invalid_argument&) {
      return 0;
    }
  }
  (void)json::serialize(codec->schema());

  const bool float_type =
      data[0] < types.size() && types[data[0]].find("float") != std::string::npos;
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
    codec->encode("flag", value, argv);
  } catch (const std::invalid_argument& e) {
    if (std::string_view(e.what()).size() > 4096) fail("an unbounded error message");
    return 0;
  }
  for (const std::string& token : argv) {
    if (token.rfind("--flag", 0) != 0) fail("a token that is not --flag", token);
    if (token.find('\0') != std::string::npos) fail("a NUL byte in a token", token);
    if (exact && float_type &&
        (token.find("inf") != std::string::npos || token.find("nan") != std::string::npos)) {
      fail("a non-finite number passed the exact check", token);
    }
  }
  return 0;
}
