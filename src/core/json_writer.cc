// src/core/json_writer.cc: corral's JSON writer (json::serialize and
// serialize_to): numbers as people write them, strings checked as UTF-8.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/json.hpp"
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

}  // namespace json
}  // namespace corral::core
