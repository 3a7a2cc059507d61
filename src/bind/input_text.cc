// src/bind/input_text.cc: check_input_text (codecs.hpp), the faithfulness
// check every JSON input to a bound command passes before its parse: a key
// given twice in one object, a number its double does not hold.
#include <boost/json/basic_parser_impl.hpp>

#include <charconv>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "bind/codecs.hpp"
#include "core/units.hpp"

namespace corral::bind {

namespace {

// Decimal: a number's value as sign, significant digits and exponent
// (value = digits x 10^exponent), so two spellings of one value compare equal.
struct Decimal {
  bool negative = false;
  std::string digits;  // no leading or trailing zeros; empty for zero
  long long exponent = 0;
  bool operator==(const Decimal& o) const {
    return digits.empty() ? o.digits.empty()
                          : negative == o.negative && digits == o.digits && exponent == o.exponent;
  }
};

Decimal decimal_of(std::string_view text) {
  Decimal d;
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) d.negative = text[i++] == '-';
  long long fraction = 0;
  bool dot = false;
  for (; i < text.size() && text[i] != 'e' && text[i] != 'E'; ++i) {
    if (text[i] == '.') {
      dot = true;
      continue;
    }
    d.digits += text[i];
    fraction += dot ? 1 : 0;
  }
  long long exponent = 0;
  if (i < text.size()) {
    ++i;
    bool negative = false;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
    for (; i < text.size(); ++i) {
      if (exponent < 1'000'000'000) exponent = exponent * 10 + (text[i] - '0');
    }
    if (negative) exponent = -exponent;
  }
  d.exponent = exponent - fraction;
  std::size_t lead = d.digits.find_first_not_of('0');
  d.digits.erase(0, lead == std::string::npos ? d.digits.size() : lead);
  while (!d.digits.empty() && d.digits.back() == '0') {
    d.digits.pop_back();
    ++d.exponent;
  }
  return d;
}

// InputChecker: a Boost.JSON parse handler that builds nothing and refuses
// what a DOM parse would hide: a key given twice in one object (the DOM
// keeps the last) and a number the text writes that its double does not
// hold (1e400 reads as infinity, 9007199254740993.0 as 2^53).
struct InputChecker {
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  std::vector<std::set<std::string>> keys;  // one per open object
  std::string key;
  std::string number;
  std::string error;

  bool fail(std::string message, boost::system::error_code& ec) {
    error = std::move(message);
    ec = boost::json::error::syntax;  // stops the parse; `error` says why
    return false;
  }
  bool on_document_begin(boost::system::error_code&) { return true; }
  bool on_document_end(boost::system::error_code&) { return true; }
  bool on_object_begin(boost::system::error_code&) {
    keys.emplace_back();
    return true;
  }
  bool on_object_end(std::size_t, boost::system::error_code&) {
    keys.pop_back();
    return true;
  }
  bool on_array_begin(boost::system::error_code&) { return true; }
  bool on_array_end(std::size_t, boost::system::error_code&) { return true; }
  bool on_key_part(json::string_view part, std::size_t, boost::system::error_code&) {
    key.append(part.data(), part.size());
    return true;
  }
  bool on_key(json::string_view part, std::size_t, boost::system::error_code& ec) {
    key.append(part.data(), part.size());
    std::string done = std::move(key);
    key.clear();
    if (!keys.back().insert(done).second) {
      return fail("the key " + core::quoted(done) + " appears twice in one object", ec);
    }
    return true;
  }
  bool on_string_part(json::string_view, std::size_t, boost::system::error_code&) { return true; }
  bool on_string(json::string_view, std::size_t, boost::system::error_code&) { return true; }
  bool on_number_part(json::string_view part, boost::system::error_code&) {
    number.append(part.data(), part.size());
    return true;
  }
  bool on_int64(std::int64_t, json::string_view part, boost::system::error_code&) {
    number.clear();
    return true;
  }
  bool on_uint64(std::uint64_t, json::string_view part, boost::system::error_code&) {
    number.clear();
    return true;
  }
  bool on_double(double d, json::string_view part, boost::system::error_code& ec) {
    number.append(part.data(), part.size());
    std::string text = std::move(number);
    number.clear();
    bool exact = std::isfinite(d);
    if (exact) {
      // The text is faithful if it spells the double's shortest form (0.1)
      // or its exact binary value (2^64 written out in full).
      const Decimal written = decimal_of(text);
      char buffer[1100];
      auto r = std::to_chars(buffer, buffer + sizeof buffer, d);
      exact = decimal_of(std::string_view(buffer, r.ptr - buffer)) == written;
      if (!exact) {
        r = std::to_chars(buffer, buffer + sizeof buffer, d, std::chars_format::scientific, 1074);
        exact =
            r.ec == std::errc() && decimal_of(std::string_view(buffer, r.ptr - buffer)) == written;
      }
    }
    if (!exact) {
      std::string shown_text = text.size() <= 64 ? text : text.substr(0, 64) + "...";
      return fail("the number " + shown_text + " has no exact double (" +
                      (std::isfinite(d) ? "it would be rounded" : "it would be infinite") + ")",
                  ec);
    }
    return true;
  }
  bool on_bool(bool, boost::system::error_code&) { return true; }
  bool on_null(boost::system::error_code&) { return true; }
  bool on_comment_part(json::string_view, boost::system::error_code&) { return true; }
  bool on_comment(json::string_view, boost::system::error_code&) { return true; }
};

}  // namespace

void check_input_text(std::string_view text) {
  boost::json::parse_options options;
  options.max_depth = json::kMaxParseDepth;
  boost::json::basic_parser<InputChecker> parser(options);
  boost::system::error_code ec;
  parser.write_some(false, text.data(), text.size(), ec);
  if (!parser.handler().error.empty()) throw std::invalid_argument(parser.handler().error);
  // Syntax errors are the DOM parse's to report.
}

}  // namespace corral::bind
