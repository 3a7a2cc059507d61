#include "core/json.hpp"

#include <algorithm>
#include <array>
#include <boost/json/basic_parser_impl.hpp>
#include <charconv>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "core/utf8.hpp"

namespace corral::core {

namespace json {

namespace {

// Writes into a string used as a buffer: grown ahead and cut to length when
// done, so that each token is a bounds check and a copy, not a call into
// std::string (whose members are not inlined here).
class Writer {
 public:
  explicit Writer(std::string& out) : out_(out), used_(out.size()) {}
  ~Writer() { out_.resize(used_); }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Room for `n` more bytes at the end; commit() what was written there.
  char* room(std::size_t n) {
    if (out_.size() - used_ < n) out_.resize(std::max(out_.size() * 2, used_ + n + 256));
    return out_.data() + used_;
  }
  void commit(std::size_t n) { used_ += n; }
  void put(char c) {
    *room(1) = c;
    ++used_;
  }
  void put(const char* text, std::size_t n) {
    std::memcpy(room(n), text, n);
    used_ += n;
  }

 private:
  std::string& out_;
  std::size_t used_;
};

// What follows the backslash for each byte that a JSON string must escape:
// the two-character escapes, 'u' for \u00XX, 0 for a byte written as is,
// 'x' for a byte from 0x80 up, which starts a UTF-8 sequence to check.
constexpr std::array<char, 256> kEscapes = [] {
  std::array<char, 256> table{};
  for (int c = 0; c < 0x20; ++c) table[c] = 'u';
  for (int c = 0x80; c < 0x100; ++c) table[c] = 'x';
  table['"'] = '"';
  table['\\'] = '\\';
  table['\n'] = 'n';
  table['\r'] = 'r';
  table['\t'] = 't';
  table['\b'] = 'b';
  table['\f'] = 'f';
  return table;
}();

// Text is UTF-8 by the time it gets here (the layers that take it in apply
// core/utf8.hpp's policy and say so in their results); the writer still
// checks, so that no text corral writes is invalid JSON: an ill-formed
// subpart that slipped through is written as U+FFFD.
void write_string(Writer& w, string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  w.put('"');
  const std::string_view view(text.data(), text.size());
  const char* run = text.data();
  const char* const end = text.data() + text.size();
  // Runs of plain bytes are copied whole: most text has nothing to escape.
  for (const char* p = run; p != end; ++p) {
    const auto byte = static_cast<unsigned char>(*p);
    const char escape = kEscapes[byte];
    if (escape == 0) continue;
    if (escape == 'x') {
      const Utf8Step step = utf8_step(view, static_cast<std::size_t>(p - text.data()));
      if (step.valid) {
        p += step.length - 1;
        continue;
      }
      w.put(run, static_cast<std::size_t>(p - run));
      w.put(kReplacementCharacter.data(), kReplacementCharacter.size());
      p += step.length - 1;
      run = p + 1;
      continue;
    }
    w.put(run, static_cast<std::size_t>(p - run));
    if (escape == 'u') {
      const char hex[] = {'\\', 'u', '0', '0', kHex[byte >> 4], kHex[byte & 15]};
      w.put(hex, sizeof hex);
    } else {
      const char pair[] = {'\\', escape};
      w.put(pair, sizeof pair);
    }
    run = p + 1;
  }
  w.put(run, static_cast<std::size_t>(end - run));
  w.put('"');
}

template <typename Integer>
void write_integer(Writer& w, Integer n) {
  char* at = w.room(24);
  w.commit(static_cast<std::size_t>(std::to_chars(at, at + 24, n).ptr - at));
}

void write_double(Writer& w, double d) {
  if (!std::isfinite(d)) {
    w.put("null", 4);
    return;
  }
  // Shortest round-trip form (std::to_chars without a format picks fixed or
  // scientific, whichever is shorter): at most 24 characters, 2 more for
  // the ".0" below.
  char* const start = w.room(32);
  char* end = std::to_chars(start, start + 30, d).ptr;
  const auto length = static_cast<std::size_t>(end - start);
  if (char* e = static_cast<char*>(std::memchr(start, 'e', length))) {
    // "1e-07" -> "1e-7", as JavaScript writes it (both are JSON).
    char* const digits = e + 2;  // to_chars always writes the exponent's sign
    char* first = digits;
    while (first + 1 < end && *first == '0') ++first;
    if (first != digits) {
      std::memmove(digits, first, static_cast<std::size_t>(end - first));
      end -= first - digits;
    }
  } else if (!std::memchr(start, '.', length)) {
    // A whole double reads back as a double, not an integer.
    *end++ = '.';
    *end++ = '0';
  }
  w.commit(static_cast<std::size_t>(end - start));
}

void write_scalar(Writer& w, const value& v) {
  switch (v.kind()) {
    case kind::null:
      w.put("null", 4);
      return;
    case kind::bool_:
      if (v.get_bool()) {
        w.put("true", 4);
      } else {
        w.put("false", 5);
      }
      return;
    case kind::int64:
      write_integer(w, v.get_int64());
      return;
    case kind::uint64:
      write_integer(w, v.get_uint64());
      return;
    case kind::double_:
      write_double(w, v.get_double());
      return;
    case kind::string:
      write_string(w, v.get_string());
      return;
    case kind::array:
    case kind::object:
      break;  // the caller walks containers
  }
}

// One open container of the walk: where it is and how far it got. No
// initialisers: OpenStack's slots are written before they are read, and
// zeroing them would cost more than a small value's whole walk.
struct Open {
  const array* a;
  const object* o;
  std::size_t next;
};

// The open containers of a walk: the first 32 in place (nearly every value
// is shallower; no allocation), deeper ones on the heap.
class OpenStack {
 public:
  bool empty() const { return size_ == 0; }
  Open& back() { return size_ <= kInline ? inline_[size_ - 1] : heap_[size_ - 1 - kInline]; }
  void push_back(const Open& open) {
    if (size_ < kInline) {
      inline_[size_] = open;
    } else {
      heap_.push_back(open);
    }
    ++size_;
  }
  void pop_back() {
    if (size_ > kInline) heap_.pop_back();
    --size_;
  }

 private:
  static constexpr std::size_t kInline = 32;
  std::array<Open, kInline> inline_;
  std::vector<Open> heap_;
  std::size_t size_ = 0;
};

void write_member(Writer& w, const key_value_pair& member) {
  write_string(w, member.key());
  w.put(':');
}

void write(Writer& w, const value& root) {
  // An explicit stack, not recursion: a deeply nested value (a guest's, a
  // caller's) cannot overflow a small thread stack here.
  OpenStack stack;
  const value* v = &root;
  while (true) {
    // Write `v`, or open it.
    if (v->is_array() && !v->get_array().empty()) {
      w.put('[');
      stack.push_back({&v->get_array(), nullptr, 1});
      v = &v->get_array()[0];
      continue;
    }
    if (v->is_object() && !v->get_object().empty()) {
      w.put('{');
      const key_value_pair& first = *v->get_object().begin();
      stack.push_back({nullptr, &v->get_object(), 1});
      write_member(w, first);
      v = &first.value();
      continue;
    }
    if (v->is_array()) {
      w.put("[]", 2);
    } else if (v->is_object()) {
      w.put("{}", 2);
    } else {
      write_scalar(w, *v);
    }
    // Move on to the next sibling, closing what is finished.
    v = nullptr;
    while (!stack.empty() && !v) {
      Open& top = stack.back();
      if (top.a && top.next < top.a->size()) {
        // Scalars in a row (most arrays hold nothing else) without the walk.
        const array& a = *top.a;
        while (top.next < a.size() && !a[top.next].is_structured()) {
          w.put(',');
          write_scalar(w, a[top.next++]);
        }
        if (top.next == a.size()) continue;
        w.put(',');
        v = &a[top.next++];
      } else if (top.o && top.next < top.o->size()) {
        w.put(',');
        const key_value_pair& member = top.o->begin()[top.next++];
        write_member(w, member);
        v = &member.value();
      } else {
        w.put(top.a ? ']' : '}');
        stack.pop_back();
      }
    }
    if (!v) return;
  }
}

}  // namespace

void serialize_to(std::string& out, const value& v) {
  Writer w(out);
  write(w, v);
}

std::string serialize(const value& v) {
  std::string out;
  serialize_to(out, v);
  return out;
}

std::string serialize(const array& a) {
  // Element by element: wrapping `a` in a value would copy it.
  std::string out;
  {
    Writer w(out);  // cuts `out` to length when it goes
    w.put('[');
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (i) w.put(',');
      write(w, a[i]);
    }
    w.put(']');
  }
  return out;
}

void serialize_to(std::string& out, const object& o) {
  // Member by member: wrapping `o` in a value would copy it.
  Writer w(out);
  w.put('{');
  bool first = true;
  for (const key_value_pair& member : o) {
    if (!first) w.put(',');
    first = false;
    write_member(w, member);
    write(w, member.value());
  }
  w.put('}');
}

std::string serialize(const object& o) {
  std::string out;
  serialize_to(out, o);
  return out;
}

std::string serialize(const string& s) { return serialize(string_view(s)); }

std::string serialize(string_view s) {
  std::string out;
  {
    Writer w(out);
    write_string(w, s);
  }
  return out;
}

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

json::object execution_fields(const Execution& execution) {
  json::object out;
  out["stdout"] = execution.stdout_text();
  out["stderr"] = execution.stderr_text();
  out["stdout_truncated"] = execution.stdout_truncated();
  out["stderr_truncated"] = execution.stderr_truncated();
  if (execution.stdout_replaced()) out["stdout_replaced"] = true;
  if (execution.stderr_replaced()) out["stderr_replaced"] = true;
  if (execution.exit_code()) out["exit_code"] = *execution.exit_code();
  out["failed"] = execution.failed();
  const Usage& usage = execution.usage();
  out["usage"] = json::object{
      {"wall_time", usage.wall_time},       {"cpu_time", usage.cpu_time},
      {"memory_peak", usage.memory_peak},   {"tool_calls", usage.tool_calls},
      {"output_bytes", usage.output_bytes},
  };
  return out;
}

json::object execution_to_object(const Execution& execution) {
  boost::system::error_code ec;
  json::value value = json::parse(execution.value(), ec);
  json::object out;
  out["value"] = ec ? json::value(nullptr) : std::move(value);
  for (auto& member : execution_fields(execution))
    out.emplace(member.key(), std::move(member.value()));
  return out;
}

void append_execution_json(std::string& out, const Execution& execution) {
  // {"value":<the text>,  then the fields' object without its own brace.
  const std::string fields = json::serialize(execution_fields(execution));
  out.reserve(out.size() + execution.value().size() + fields.size() + 10);
  out += R"({"value":)";
  out += execution.value();
  out += ',';
  out.append(fields, 1);
}

namespace {

double number_or(const json::object& object, std::string_view key, double fallback) {
  const json::value* v = object.if_contains(key);
  if (!v) return fallback;
  if (v->is_double()) return v->get_double();
  if (v->is_int64()) return static_cast<double>(v->get_int64());
  if (v->is_uint64()) return static_cast<double>(v->get_uint64());
  return fallback;
}

std::uint64_t count_or_zero(const json::object& object, std::string_view key) {
  const json::value* v = object.if_contains(key);
  if (!v) return 0;
  if (v->is_uint64()) return v->get_uint64();
  if (v->is_int64() && v->get_int64() >= 0) return static_cast<std::uint64_t>(v->get_int64());
  return 0;
}

std::string string_or_empty(const json::object& object, std::string_view key) {
  const json::value* v = object.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

bool bool_or_false(const json::object& object, std::string_view key) {
  const json::value* v = object.if_contains(key);
  return v && v->is_bool() && v->get_bool();
}

}  // namespace

Execution execution_from_object(const json::object& object) {
  const json::value* value = object.if_contains("value");
  return execution_from_fields(object, value ? json::serialize(*value) : std::string("null"));
}

Execution execution_from_fields(const json::object& object, std::string value) {
  ExecutionData data;
  data.value = std::move(value);
  data.stdout_text = string_or_empty(object, "stdout");
  data.stderr_text = string_or_empty(object, "stderr");
  data.stdout_truncated = bool_or_false(object, "stdout_truncated");
  data.stderr_truncated = bool_or_false(object, "stderr_truncated");
  data.stdout_replaced = bool_or_false(object, "stdout_replaced");
  data.stderr_replaced = bool_or_false(object, "stderr_replaced");
  if (const json::value* v = object.if_contains("exit_code"); v && v->is_int64()) {
    data.exit_code = static_cast<int>(v->get_int64());
  }
  data.failed = bool_or_false(object, "failed");
  if (const json::value* u = object.if_contains("usage"); u && u->is_object()) {
    const json::object& usage = u->get_object();
    data.usage.wall_time = number_or(usage, "wall_time", 0);
    data.usage.cpu_time = number_or(usage, "cpu_time", 0);
    data.usage.memory_peak = count_or_zero(usage, "memory_peak");
    data.usage.tool_calls = count_or_zero(usage, "tool_calls");
    data.usage.output_bytes = count_or_zero(usage, "output_bytes");
  }
  return Execution(std::move(data));
}

json::object failure_to_object(const Failure& failure) {
  json::object out;
  out["code"] = to_string(failure.code);
  out["message"] = failure.message;
  out["retryable"] = failure.retryable();
  if (failure.execution) out["execution"] = execution_to_object(*failure.execution);
  return out;
}

Failure failure_from_object(const json::object& object) {
  const json::value* code = object.if_contains("code");
  if (!code || !code->is_string()) {
    throw std::invalid_argument("failure has no string \"code\"");
  }
  auto parsed = failure_code_from_string(code->get_string());
  if (!parsed) {
    throw std::invalid_argument("unknown failure code \"" + std::string(code->get_string()) + "\"");
  }
  Failure failure{*parsed, string_or_empty(object, "message"), nullptr};
  if (const json::value* e = object.if_contains("execution"); e && e->is_object()) {
    failure.execution = std::make_shared<const Execution>(execution_from_object(e->get_object()));
  }
  return failure;
}

}  // namespace corral::core

namespace corral {

std::string to_json(const Execution& execution) {
  std::string out;
  core::append_execution_json(out, execution);
  return out;
}

}  // namespace corral
