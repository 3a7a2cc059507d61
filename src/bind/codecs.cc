// src/bind/codecs.cc: the built-in codecs (pflag's standard types) and the
// text codec for custom one-string types.
#include "bind/codecs.hpp"

#include <boost/json/basic_parser_impl.hpp>

#include <cfloat>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "core/units.hpp"
#include "core/utf8.hpp"
#include "re2/re2.h"

namespace corral::bind {

namespace {

enum class Scalar {
  boolean,
  int8,
  int16,
  int32,
  int64,
  uint8,
  uint16,
  uint32,
  uint64,
  float32,
  float64,
  string,
  duration,
  count,
};

constexpr const char* kDurationPattern =
    "^[-+]?(0|((\\d+(\\.\\d*)?|\\.\\d+)(ns|us|\xc2\xb5s|ms|s|m|h))+)$";

// True iff `text` matches kDurationPattern. One pass, no backtracking: after
// a number the unit is decided by its first byte ("m" is minutes unless an
// "s" follows, and a unit is always followed by a digit, '.' or the end).
bool is_duration(std::string_view text) {
  std::size_t i = 0;
  const std::size_t n = text.size();
  auto digit = [&](std::size_t at) { return at < n && text[at] >= '0' && text[at] <= '9'; };
  if (i < n && (text[i] == '-' || text[i] == '+')) ++i;
  if (text.substr(i) == "0") return true;
  if (i == n) return false;
  while (i < n) {
    // \d+(\.\d*)? | \.\d+
    if (digit(i)) {
      while (digit(i)) ++i;
      if (i < n && text[i] == '.') {
        ++i;
        while (digit(i)) ++i;
      }
    } else if (i < n && text[i] == '.' && digit(i + 1)) {
      ++i;
      while (digit(i)) ++i;
    } else {
      return false;
    }
    // ns | us | \xc2\xb5s | ms | s | m | h
    const std::string_view rest = text.substr(i);
    if (rest.starts_with("ns") || rest.starts_with("us") || rest.starts_with("ms")) {
      i += 2;
    } else if (rest.starts_with("\xc2\xb5s")) {
      i += 3;
    } else if (rest.starts_with("s") || rest.starts_with("m") || rest.starts_with("h")) {
      i += 1;
    } else {
      return false;
    }
  }
  return true;
}

[[noreturn]] void reject(const std::string& message) { throw std::invalid_argument(message); }

// The JSON text of `v` for an error message: at most about 64 bytes, cut on
// a character boundary, so a megabyte of input never becomes a megabyte of
// message (the fuzzer's "unbounded error message").
std::string shown(const json::value& v) {
  std::string text = json::serialize(v);
  constexpr std::size_t kShown = 64;
  if (text.size() <= kShown + 16) return text;
  const std::size_t size = text.size();
  std::size_t cut = kShown;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
  return text + "... (" + std::to_string(size) + " bytes)";
}

struct IntRange {
  __int128 min;
  __int128 max;
};

IntRange range_of(Scalar s) {
  switch (s) {
    case Scalar::int8:
      return {INT8_MIN, INT8_MAX};
    case Scalar::int16:
      return {INT16_MIN, INT16_MAX};
    case Scalar::int32:
      return {INT32_MIN, INT32_MAX};
    case Scalar::uint8:
      return {0, UINT8_MAX};
    case Scalar::uint16:
      return {0, UINT16_MAX};
    case Scalar::uint32:
      return {0, UINT32_MAX};
    case Scalar::uint64:
      return {0, static_cast<__int128>(UINT64_MAX)};
    case Scalar::count:
      return {0, INT64_MAX};
    default:
      return {INT64_MIN, INT64_MAX};
  }
}

// An exact integer from any JSON number that holds one.
__int128 integer_of(const json::value& v) {
  if (v.is_int64()) return v.get_int64();
  if (v.is_uint64()) return v.get_uint64();
  if (v.is_double()) {
    double d = v.get_double();
    // From 2^53 on a double no longer names one integer (9007199254740993.0
    // reads as 2^53): not faithful.
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9007199254740992.0) {
      return static_cast<__int128>(static_cast<std::int64_t>(d));
    }
  }
  reject("expected an integer, got " + shown(v));
}

std::string int128_text(__int128 n) {
  if (n == 0) return "0";
  bool negative = n < 0;
  unsigned __int128 u =
      negative ? static_cast<unsigned __int128>(-(n + 1)) + 1 : static_cast<unsigned __int128>(n);
  std::string out;
  while (u != 0) {
    out.insert(out.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  return negative ? "-" + out : out;
}

void check_string(const std::string_view s) {
  if (s.find('\0') != std::string_view::npos)
    reject("a command-line argument cannot hold a NUL byte");
}

std::string scalar_text(Scalar s, const json::value& v) {
  switch (s) {
    case Scalar::boolean:
      if (!v.is_bool()) reject("expected a boolean, got " + shown(v));
      return v.get_bool() ? "true" : "false";
    case Scalar::float32:
    case Scalar::float64: {
      if (!v.is_number()) reject("expected a number, got " + shown(v));
      double d = v.to_number<double>();
      if (!std::isfinite(d)) reject("not a finite number: " + shown(v));
      // An integer the target type cannot hold exactly would reach the
      // program as a different integer.
      const bool exact =
          v.is_int64() ? d != 9223372036854775808.0 && static_cast<std::int64_t>(d) == v.get_int64()
          : v.is_uint64()
              ? d < 18446744073709551616.0 && static_cast<std::uint64_t>(d) == v.get_uint64()
              : true;
      if (!exact)
        reject("a " + std::string(s == Scalar::float32 ? "float32" : "float64") + " cannot hold " +
               shown(v) + " exactly");
      char buffer[64];
      std::to_chars_result r;
      if (s == Scalar::float32) {
        if (std::fabs(d) > FLT_MAX) reject("out of range for float32: " + shown(v));
        const float f = static_cast<float>(d);
        if (d == std::floor(d) && static_cast<double>(f) != d) {
          reject("a float32 cannot hold " + shown(v) + " exactly");
        }
        r = std::to_chars(buffer, buffer + sizeof buffer, f);
      } else {
        r = std::to_chars(buffer, buffer + sizeof buffer, d);
      }
      return std::string(buffer, r.ptr);
    }
    case Scalar::string: {
      if (!v.is_string()) reject("expected a string, got " + shown(v));
      std::string text(v.get_string());
      check_string(text);
      return text;
    }
    case Scalar::duration: {
      if (!v.is_string()) reject("expected a duration string such as \"1m30s\"");
      std::string text(v.get_string());
      if (!is_duration(text)) reject("not a duration: " + core::quoted(text));
      return text;
    }
    default: {
      __int128 n = integer_of(v);
      IntRange r = range_of(s);
      if (n < r.min || n > r.max) reject("out of range: " + shown(v));
      return int128_text(n);
    }
  }
}

json::object scalar_schema(Scalar s) {
  json::object o;
  switch (s) {
    case Scalar::boolean:
      o["type"] = "boolean";
      break;
    case Scalar::float32:
      o["type"] = "number";
      o["minimum"] = -static_cast<double>(FLT_MAX);
      o["maximum"] = static_cast<double>(FLT_MAX);
      break;
    case Scalar::float64:
      o["type"] = "number";
      break;
    case Scalar::string:
      o["type"] = "string";
      break;
    case Scalar::duration:
      o["type"] = "string";
      o["pattern"] = kDurationPattern;
      break;
    default: {
      o["type"] = "integer";
      IntRange r = range_of(s);
      o["minimum"] = static_cast<std::int64_t>(r.min);
      if (r.max > INT64_MAX) {
        o["maximum"] = static_cast<std::uint64_t>(r.max);
      } else {
        o["maximum"] = static_cast<std::int64_t>(r.max);
      }
      break;
    }
  }
  return o;
}

bool is_number_text(std::string_view text);

// One value's tokens: `--name=value`, or `--name` `value` for a separate
// spelling. A separate value that starts with '-' (and is no number) would be
// read as an option by most parsers (argparse's among them): refused.
void put(const Spelling& flag, std::string_view value, std::vector<std::string>& argv) {
  if (!flag.separate) {
    std::string t = flag.option;
    t += '=';
    t.append(value);
    argv.push_back(std::move(t));
    return;
  }
  if (!value.empty() && value[0] == '-' && !is_number_text(value)) {
    reject("the value " + core::quoted(std::string(value)) + " starts with '-': after " +
           flag.option +
           " as a separate argument the program could read it as an option (style: equals "
           "writes " +
           flag.option + "=VALUE, where the program accepts it)");
  }
  argv.push_back(flag.option);
  argv.emplace_back(value);
}

// ^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$ in one pass: a negative number
// parsers take as a value.
bool is_number_text(std::string_view text) {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    return i > start;
  };
  if (i < text.size() && text[i] == '-') ++i;
  bool whole = digits();
  bool fraction = false;
  if (i < text.size() && text[i] == '.') {
    ++i;
    fraction = digits();
  }
  if (!whole && !fraction) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
    if (!digits()) return false;
  }
  return i == text.size();
}

// ScalarCodec: one token.
class ScalarCodec final : public Codec {
 public:
  explicit ScalarCodec(Scalar s) : s_(s) {}
  json::object schema() const override { return scalar_schema(s_); }
  void encode(const Spelling& flag, const json::value& value,
              std::vector<std::string>& argv) const override {
    put(flag, scalar_text(s_, value), argv);
  }

 private:
  Scalar s_;
};

// SwitchCodec: a flag that takes no value (`--name` or nothing), for
// programs whose boolean options refuse `--name=true`.
class SwitchCodec final : public Codec {
 public:
  json::object schema() const override { return scalar_schema(Scalar::boolean); }
  void encode(const Spelling& flag, const json::value& value,
              std::vector<std::string>& argv) const override {
    if (!value.is_bool()) reject("expected a boolean, got " + shown(value));
    if (value.get_bool()) argv.push_back(flag.option);
  }
  bool takes_value() const override { return false; }
};

// SliceCodec: one token per element. `csv` elements are split on commas by
// the program (pflag's *Slice types), so commas and quotes are refused.
class SliceCodec final : public Codec {
 public:
  SliceCodec(Scalar s, bool csv) : s_(s), csv_(csv) {}
  json::object schema() const override {
    json::object o;
    o["type"] = "array";
    o["items"] = scalar_schema(s_);
    return o;
  }
  void encode(const Spelling& flag, const json::value& value,
              std::vector<std::string>& argv) const override {
    if (!value.is_array()) reject("expected an array, got " + shown(value));
    for (const auto& element : value.get_array()) {
      std::string text = scalar_text(s_, element);
      if (csv_ && text.find_first_of(",\"\r\n") != std::string::npos) {
        reject("element " + shown(element) +
               " would be split by the program (commas, quotes and newlines are not faithful)");
      }
      put(flag, text, argv);
    }
  }

 private:
  Scalar s_;
  bool csv_;
};

// MapCodec: one `--name=key=value` token per entry, keys in sorted order.
class MapCodec final : public Codec {
 public:
  explicit MapCodec(Scalar value_kind) : s_(value_kind) {}
  json::object schema() const override {
    json::object o;
    o["type"] = "object";
    o["additionalProperties"] = scalar_schema(s_);
    return o;
  }
  void encode(const Spelling& flag, const json::value& value,
              std::vector<std::string>& argv) const override {
    if (!value.is_object()) reject("expected an object, got " + shown(value));
    std::map<std::string, std::string> sorted;
    for (const auto& [key, v] : value.get_object()) {
      std::string k(key);
      check_string(k);
      if (k.empty() || k.find_first_of("=,\"\r\n") != std::string::npos) {
        reject("key " + core::quoted(k) + " cannot be expressed (no '=', ',', quotes or newlines)");
      }
      std::string text = scalar_text(s_, v);
      if (text.find_first_of(",\"\r\n") != std::string::npos) {
        reject("value for " + core::quoted(k) + " would be split by the program");
      }
      sorted[k] = text;
    }
    for (const auto& [k, v] : sorted) put(flag, k + "=" + v, argv);
  }

 private:
  Scalar s_;
};

size_t code_points(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// Narrowed: another codec's values, narrowed by JSON Schema constraints that
// apply to the value or, for a list flag, to each element. enum, pattern,
// minimum, maximum, minLength and maxLength are enforced; the rest is only
// published.
class Narrowed final : public Codec {
 public:
  Narrowed(std::shared_ptr<const Codec> inner, const json::object& constraints)
      : inner_(std::move(inner)), schema_(inner_->schema()) {
    const bool list = schema_.at("type") == "array";
    if (schema_.at("type") == "object") reject("a map flag cannot be narrowed");
    json::object& target = list ? schema_.at("items").as_object() : schema_;
    const json::value type = target.at("type");
    if (auto* t = constraints.if_contains("type"); t && *t != type) {
      reject("constraints may narrow the flag's schema but not change its type (" + shown(type) +
             ", got " + shown(*t) + ")");
    }
    for (const auto& [key, value] : constraints) {
      // A bound from the type and one from the constraints: the tighter.
      if (key == "minimum" || key == "maximum") {
        if (!value.is_number()) reject(std::string(key) + " must be a number");
        if (type != "integer" && type != "number") {
          reject(std::string(key) + " applies to numbers, not to " + shown(type));
        }
        const json::value* current = target.if_contains(key);
        const double mine = value.to_number<double>();
        if (current && (key == "minimum" ? current->to_number<double>() > mine
                                         : current->to_number<double>() < mine)) {
          continue;
        }
      }
      target[key] = value;
    }
    if (auto* p = target.if_contains("pattern"); p && constraints.contains("pattern")) {
      if (type != "string") reject("pattern applies to strings, not to " + shown(type));
      if (!p->is_string()) reject("pattern must be a string");
      const json::string& text = p->get_string();
      if (text.size() > kMaxPatternBytes) {
        reject("bad pattern: longer than " + std::to_string(kMaxPatternBytes) + " bytes");
      }
      RE2::Options options;
      options.set_log_errors(false);
      options.set_max_mem(kPatternMemory);
      pattern_ = std::make_unique<const RE2>(re2::StringPiece(text.data(), text.size()), options);
      // RE2 quotes the part of the pattern it refuses, which may be nearly
      // all of its 4 KiB: the message keeps a short prefix of it.
      if (!pattern_->ok()) {
        const std::string& why = pattern_->error();
        reject("bad pattern: " + why.substr(0, core::utf8_cut(why, 160)) +
               (why.size() > 160 ? "..." : ""));
      }
    }
    for (const char* key : {"minLength", "maxLength"}) {
      if (auto* m = constraints.if_contains(key)) {
        if (type != "string") reject(std::string(key) + " applies to strings");
        if (!m->is_number()) reject(std::string(key) + " must be a number");
      }
    }
    if (auto* e = constraints.if_contains("enum")) {
      if (!e->is_array() || e->get_array().empty()) reject("enum must be a non-empty list");
      // Each value must be one the flag's own type takes.
      for (const auto& item : e->get_array()) {
        if (item.is_array() || item.is_object() || item.is_null()) {
          reject("enum lists strings, numbers or booleans, not " + shown(item));
        }
        std::vector<std::string> scratch;
        try {
          inner_->encode(Spelling("x"), list ? json::value(json::array{item}) : item, scratch);
        } catch (const std::invalid_argument& error) {
          reject("enum value " + shown(item) + " is not a valid " + shown(type) + ": " +
                 error.what());
        }
      }
    }
    element_ = target;
  }

  json::object schema() const override { return schema_; }

  void encode(const Spelling& flag, const json::value& value,
              std::vector<std::string>& argv) const override {
    if (value.is_array()) {
      for (const auto& element : value.get_array()) check(element);
    } else {
      check(value);
    }
    inner_->encode(flag, value, argv);
  }
  bool takes_value() const override { return inner_->takes_value(); }

 private:
  // One scalar against the constraints. Anything of the wrong kind is left
  // to the inner codec, which refuses it with its own message.
  void check(const json::value& value) const {
    if (value.is_string()) {
      const std::string_view text = value.get_string();
      // Lengths first (linear and cheap), then enum, then the pattern
      // (linear in RE2, but only on text that already fits).
      const double length = static_cast<double>(code_points(text));
      if (auto* m = element_.if_contains("maxLength"); m && length > m->to_number<double>()) {
        reject("longer than maxLength");
      }
      if (auto* m = element_.if_contains("minLength"); m && length < m->to_number<double>()) {
        reject("shorter than minLength");
      }
    }
    if (value.is_number()) {
      const double number = value.to_number<double>();
      if (auto* m = element_.if_contains("minimum"); m && number < m->to_number<double>()) {
        reject(shown(value) + " is below the minimum " + shown(*m));
      }
      if (auto* m = element_.if_contains("maximum"); m && number > m->to_number<double>()) {
        reject(shown(value) + " is above the maximum " + shown(*m));
      }
    }
    if (auto* e = element_.if_contains("enum")) {
      bool found = false;
      for (const auto& item : e->get_array()) found = found || same(item, value);
      if (!found) {
        const std::string values = json::serialize(*e);
        reject(shown(value) + " is not one of " +
               (values.size() <= 256
                    ? values
                    : "the enum's " + std::to_string(e->get_array().size()) + " values"));
      }
    }
    if (pattern_ && value.is_string()) {
      const std::string_view text = value.get_string();
      if (!RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *pattern_)) {
        reject(shown(value) + " does not match " +
               core::quoted(element_.at("pattern").get_string()));
      }
    }
  }

  // JSON equality where 1, 1.0 and 1u are one number.
  static bool same(const json::value& a, const json::value& b) {
    if (a.is_number() && b.is_number()) return a.to_number<double>() == b.to_number<double>();
    return a == b;
  }

  // A pattern longer than this is refused at bind time, as is one whose
  // compiled program would need more than kPatternMemory.
  static constexpr std::size_t kMaxPatternBytes = 4096;
  static constexpr std::int64_t kPatternMemory = std::int64_t{1} << 20;

  std::shared_ptr<const Codec> inner_;
  json::object schema_;
  json::object element_;  // the schema the constraints apply to
  std::unique_ptr<const RE2> pattern_;
};

struct Entry {
  enum Shape { scalar, slice, csv_slice, map, flag_switch } shape;
  Scalar scalar_kind;
};

const std::map<std::string, Entry, std::less<>>& table() {
  static const std::map<std::string, Entry, std::less<>> t = {
      {"bool", {Entry::scalar, Scalar::boolean}},
      {"switch", {Entry::flag_switch, Scalar::boolean}},
      {"int", {Entry::scalar, Scalar::int64}},
      {"int8", {Entry::scalar, Scalar::int8}},
      {"int16", {Entry::scalar, Scalar::int16}},
      {"int32", {Entry::scalar, Scalar::int32}},
      {"int64", {Entry::scalar, Scalar::int64}},
      {"uint", {Entry::scalar, Scalar::uint64}},
      {"uint8", {Entry::scalar, Scalar::uint8}},
      {"uint16", {Entry::scalar, Scalar::uint16}},
      {"uint32", {Entry::scalar, Scalar::uint32}},
      {"uint64", {Entry::scalar, Scalar::uint64}},
      {"float32", {Entry::scalar, Scalar::float32}},
      {"float64", {Entry::scalar, Scalar::float64}},
      {"string", {Entry::scalar, Scalar::string}},
      {"duration", {Entry::scalar, Scalar::duration}},
      {"count", {Entry::scalar, Scalar::count}},
      {"stringSlice", {Entry::csv_slice, Scalar::string}},
      {"stringArray", {Entry::slice, Scalar::string}},
      {"intSlice", {Entry::csv_slice, Scalar::int64}},
      {"int32Slice", {Entry::csv_slice, Scalar::int32}},
      {"int64Slice", {Entry::csv_slice, Scalar::int64}},
      {"uintSlice", {Entry::csv_slice, Scalar::uint64}},
      {"float32Slice", {Entry::csv_slice, Scalar::float32}},
      {"float64Slice", {Entry::csv_slice, Scalar::float64}},
      {"boolSlice", {Entry::csv_slice, Scalar::boolean}},
      {"durationSlice", {Entry::csv_slice, Scalar::duration}},
      {"stringToString", {Entry::map, Scalar::string}},
      {"stringToInt", {Entry::map, Scalar::int64}},
      {"stringToInt64", {Entry::map, Scalar::int64}},
  };
  return t;
}

}  // namespace

std::shared_ptr<const Codec> builtin_codec(std::string_view type) {
  auto it = table().find(type);
  if (it == table().end()) return nullptr;
  const Entry& e = it->second;
  switch (e.shape) {
    case Entry::scalar:
      return std::make_shared<ScalarCodec>(e.scalar_kind);
    case Entry::slice:
      return std::make_shared<SliceCodec>(e.scalar_kind, false);
    case Entry::csv_slice:
      return std::make_shared<SliceCodec>(e.scalar_kind, true);
    case Entry::map:
      return std::make_shared<MapCodec>(e.scalar_kind);
    case Entry::flag_switch:
      return std::make_shared<SwitchCodec>();
  }
  return nullptr;
}

const std::vector<std::string>& builtin_types() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& [name, entry] : table()) out.push_back(name);
    return out;
  }();
  return names;
}

namespace {

json::object constraints_object(std::string_view constraints_json) {
  json::value parsed;
  try {
    parsed = core::parse_json(constraints_json, "codec constraints");
  } catch (const std::invalid_argument& e) {
    reject(e.what());
  }
  if (!parsed.is_object()) reject("codec constraints must be a JSON object");
  return std::move(parsed.get_object());
}

}  // namespace

std::shared_ptr<const Codec> text_codec(std::string_view constraints_json) {
  return narrowed(builtin_codec("string"), constraints_json);
}

std::shared_ptr<const Codec> narrowed(std::shared_ptr<const Codec> inner,
                                      std::string_view constraints_json) {
  return std::make_shared<Narrowed>(std::move(inner), constraints_object(constraints_json));
}

}  // namespace corral::bind
