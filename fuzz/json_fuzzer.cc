// fuzz/json_fuzzer.cc: core::json::parse (depth-limited), parse_json,
// is_json_array, corral's writer, and the Execution/Failure readers.
//
// Invariants: bad text is an error code or std::invalid_argument, never a
// crash; the three parse entry points agree; what parses serializes to JSON
// that parses again and serializes to the same text (the writer is a fixed
// point after one round); the writer emits valid UTF-8 for valid input, and
// for any bytes as a string it writes JSON that parses to those bytes with
// each ill-formed subpart as U+FFFD (core/utf8.hpp's policy).
#include <boost/json.hpp>
#include <stdexcept>
#include <system_error>

#include "core/json.hpp"
#include "core/utf8.hpp"
#include "fuzz_util.hpp"

namespace json = corral::core::json;
using corral::fuzz::fail;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = corral::fuzz::text_of(data, size);

  {  // the input's bytes as one JSON string
    const std::string literal = json::serialize(json::string_view(text.data(), text.size()));
    if (!corral::fuzz::is_utf8(literal)) fail("the writer made invalid UTF-8 of bytes", literal);
    boost::system::error_code lec;
    const json::value read = json::parse(literal, lec);
    if (lec || !read.is_string()) fail("the writer's string literal does not parse", literal);
    std::string expected(text);
    const bool replaced = corral::core::replace_invalid_utf8(expected);
    if (replaced == corral::core::is_valid_utf8(text)) fail("replaced disagrees with valid", text);
    if (!corral::core::is_valid_utf8(expected)) fail("replacement left invalid UTF-8", expected);
    if (std::string_view(read.get_string()) != expected)
      fail("the writer's replacement differs from replace_invalid_utf8", literal);
    for (std::size_t max = 0; max <= expected.size() && max < 8; ++max) {
      const std::size_t cut = corral::core::utf8_cut(expected, expected.size() - max);
      if (!corral::core::is_valid_utf8(std::string_view(expected).substr(0, cut)))
        fail("utf8_cut split a character", expected);
    }
  }

  boost::system::error_code ec;
  json::value value = json::parse(json::string_view(text.data(), text.size()), ec);
  std::error_code sec;
  json::value again = json::parse(json::string_view(text.data(), text.size()), sec);
  if (bool(ec) != bool(sec)) fail("the two error-code overloads disagree", text);

  bool parse_json_ok = true;
  try {
    (void)corral::core::parse_json(text, "fuzz input");
  } catch (const std::invalid_argument&) {
    parse_json_ok = false;
  }
  if (parse_json_ok == bool(ec)) fail("parse_json disagrees with json::parse", text);

  const bool array = corral::core::is_json_array(text);
  if (array != (!ec && value.is_array())) fail("is_json_array disagrees with json::parse", text);
  if (ec) return 0;

  const std::string first = json::serialize(value);
  boost::system::error_code ec2;
  json::value reparsed = json::parse(first, ec2);
  if (ec2) fail("the writer's output does not parse", first);
  const std::string second = json::serialize(reparsed);
  if (first != second)
    fail("serialize(parse(serialize(v))) != serialize(v)", first + "\n" + second);
  if (corral::fuzz::is_utf8(text) && !corral::fuzz::is_utf8(first))
    fail("the writer made invalid UTF-8", first);

  if (const json::object* object = value.if_object()) {
    const corral::Execution execution = corral::core::execution_from_object(*object);
    (void)json::serialize(corral::core::execution_to_object(execution));
    try {
      const corral::Failure failure = corral::core::failure_from_object(*object);
      (void)json::serialize(corral::core::failure_to_object(failure));
    } catch (const std::invalid_argument&) {
    }
  }
  return 0;
}
