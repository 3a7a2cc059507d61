// src/core/json_parse.cc: reading JSON: json::parse with exact doubles and
// corral's depth, and the checks that build nothing (is_json_value_text).
#include <boost/json/basic_parser_impl.hpp>
#include <charconv>
#include <stdexcept>

#include "core/json.hpp"

namespace corral::core {
namespace json {

namespace {

parse_options deep_enough() {
  parse_options options;
  options.max_depth = kMaxParseDepth;
  return options;
}

// PreciseHandler: the handler boost::json::parser uses (detail/handler.hpp),
// except for doubles. Boost 1.81 converts decimal text to a double
// imprecisely: "1.8446700004512874e+28", which the writer prints for one
// double, reads back as the double below it, so a value drifted by an ulp on
// every hop (the fuzzer's round trip found it). Here every double is read
// again from its text with std::from_chars, which rounds correctly; text
// past the range of a double keeps Boost's reading (infinity or zero).
struct PreciseHandler {
  static constexpr std::size_t max_object_size = object::max_size();
  static constexpr std::size_t max_array_size = array::max_size();
  static constexpr std::size_t max_key_size = string::max_size();
  static constexpr std::size_t max_string_size = string::max_size();

  value_stack st;
  std::string number;  // the parts of the current number seen so far

  explicit PreciseHandler(storage_ptr sp) : st(std::move(sp)) {}

  bool on_document_begin(error_code&) { return true; }
  bool on_document_end(error_code&) { return true; }
  bool on_object_begin(error_code&) { return true; }
  bool on_object_end(std::size_t n, error_code&) {
    st.push_object(n);
    return true;
  }
  bool on_array_begin(error_code&) { return true; }
  bool on_array_end(std::size_t n, error_code&) {
    st.push_array(n);
    return true;
  }
  bool on_key_part(string_view s, std::size_t, error_code&) {
    st.push_chars(s);
    return true;
  }
  bool on_key(string_view s, std::size_t, error_code&) {
    st.push_key(s);
    return true;
  }
  bool on_string_part(string_view s, std::size_t, error_code&) {
    st.push_chars(s);
    return true;
  }
  bool on_string(string_view s, std::size_t, error_code&) {
    st.push_string(s);
    return true;
  }
  bool on_number_part(string_view s, error_code&) {
    number.append(s.data(), s.size());
    return true;
  }
  bool on_int64(std::int64_t i, string_view, error_code&) {
    number.clear();
    st.push_int64(i);
    return true;
  }
  bool on_uint64(std::uint64_t u, string_view, error_code&) {
    number.clear();
    st.push_uint64(u);
    return true;
  }
  bool on_double(double d, string_view s, error_code&) {
    number.append(s.data(), s.size());
    double exact = 0;
    const char* end = number.data() + number.size();
    const auto [ptr, ec] = std::from_chars(number.data(), end, exact);
    if (ec == std::errc() && ptr == end) d = exact;
    number.clear();
    st.push_double(d);
    return true;
  }
  bool on_bool(bool b, error_code&) {
    st.push_bool(b);
    return true;
  }
  bool on_null(error_code&) {
    st.push_null();
    return true;
  }
  bool on_comment_part(string_view, error_code&) { return true; }
  bool on_comment(string_view, error_code&) { return true; }
};

// boost::json::parse(s, ec, {}, deep_enough()) with PreciseHandler.
value precise_parse(string_view s, error_code& ec) {
  basic_parser<PreciseHandler> p(deep_enough(), storage_ptr());
  p.handler().st.reset(storage_ptr());
  const std::size_t n = p.write_some(false, s.data(), s.size(), ec);
  if (!ec && n < s.size()) ec = error::extra_data;
  if (ec) return nullptr;
  return p.handler().st.release();
}

}  // namespace

value parse(string_view s) {
  error_code ec;
  value v = precise_parse(s, ec);
  if (ec) throw boost::system::system_error(ec);
  return v;
}

value parse(string_view s, boost::system::error_code& ec) { return precise_parse(s, ec); }

value parse(string_view s, std::error_code& ec) {
  error_code jec;
  value v = precise_parse(s, jec);
  ec = jec;
  return v;
}

}  // namespace json

json::value parse_json(std::string_view text, std::string_view what) {
  boost::system::error_code ec;
  json::value value = json::parse(json::string_view(text.data(), text.size()), ec);
  if (ec) {
    throw std::invalid_argument(std::string(what) + " is not valid JSON: " + ec.message());
  }
  return value;
}

namespace {

// Reads a document and keeps nothing: basic_parser checks the grammar, the
// UTF-8 and the depth; every event is accepted as it comes.
struct CheckingHandler {
  static constexpr std::size_t max_object_size = json::object::max_size();
  static constexpr std::size_t max_array_size = json::array::max_size();
  static constexpr std::size_t max_key_size = json::string::max_size();
  static constexpr std::size_t max_string_size = json::string::max_size();
  using error_code = boost::system::error_code;
  using string_view = json::string_view;

  bool on_document_begin(error_code&) { return true; }
  bool on_document_end(error_code&) { return true; }
  bool on_object_begin(error_code&) { return true; }
  bool on_object_end(std::size_t, error_code&) { return true; }
  bool on_array_begin(error_code&) { return true; }
  bool on_array_end(std::size_t, error_code&) { return true; }
  bool on_key_part(string_view, std::size_t, error_code&) { return true; }
  bool on_key(string_view, std::size_t, error_code&) { return true; }
  bool on_string_part(string_view, std::size_t, error_code&) { return true; }
  bool on_string(string_view, std::size_t, error_code&) { return true; }
  bool on_number_part(string_view, error_code&) { return true; }
  bool on_int64(std::int64_t, string_view, error_code&) { return true; }
  bool on_uint64(std::uint64_t, string_view, error_code&) { return true; }
  bool on_double(double, string_view, error_code&) { return true; }
  bool on_bool(bool, error_code&) { return true; }
  bool on_null(error_code&) { return true; }
  bool on_comment_part(string_view, error_code&) { return true; }
  bool on_comment(string_view, error_code&) { return true; }
};

}  // namespace

bool is_json_value_text(std::string_view text) noexcept {
  json::parse_options options;
  options.max_depth = json::kMaxValueDepth;
  json::basic_parser<CheckingHandler> parser(options);
  boost::system::error_code ec;
  const std::size_t n = parser.write_some(false, text.data(), text.size(), ec);
  return !ec && n == text.size();
}

bool is_json_array(std::string_view text) noexcept {
  boost::system::error_code ec;
  const json::value value = json::parse(json::string_view(text.data(), text.size()), ec);
  return !ec && value.is_array();
}

}  // namespace corral::core
