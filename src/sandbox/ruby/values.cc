#include "sandbox/ruby/values.hpp"

#include <mruby/array.h>
#include <mruby/hash.h>
#include <mruby/string.h>

#include <boost/json.hpp>
#include <charconv>
#include <cmath>
#include <vector>

#include "core/json.hpp"
#include "core/json_string.hpp"
#include "core/utf8.hpp"

namespace corral::sandbox::ruby {
namespace {

using core::is_valid_utf8;

// A refusal names the culprit's place: each key cut to kMaxShownKey bytes,
// and a place longer than kMaxShownPath keeps its first and last steps.
constexpr std::size_t kMaxShownKey = 40;
constexpr std::size_t kMaxShownPath = 400;

struct Writer {
  mrb_state* mrb;
  std::string& out;
  std::string& why;
  std::string_view root;
  std::size_t max_bytes;
  bool too_large = false;
  // The steps from the root to the value being written: an index, or a key
  // (a view into the key's String or Symbol, alive while it is written).
  // The place is spelled out only for a refusal: building it for every
  // element copied the whole path per element (a long key above a wide
  // array made to_json quadratic).
  struct Step {
    mrb_int index = 0;
    std::string_view key;
    bool is_key = false;
  };
  std::vector<Step> steps;

  static std::string step_text(const Step& step) {
    std::string text = "[";
    if (!step.is_key) {
      text += std::to_string(step.index);
    } else if (step.key.size() > kMaxShownKey) {
      std::string cut(step.key.substr(0, core::utf8_cut(step.key, kMaxShownKey)));
      cut += "...";
      core::append_json_string(text, cut);
    } else {
      core::append_json_string(text, step.key);
    }
    text += ']';
    return text;
  }

  std::string place() const {
    std::vector<std::string> parts;
    std::size_t total = 0;
    for (const Step& step : steps) {
      parts.push_back(step_text(step));
      total += parts.back().size();
    }
    std::string text(root);
    if (total <= kMaxShownPath) {
      for (const std::string& part : parts) text += part;
      return text;
    }
    // The first steps up to half the budget, "...", then the last ones.
    std::size_t head = 0, used = 0;
    while (head < parts.size() && used + parts[head].size() <= kMaxShownPath / 2)
      used += parts[head++].size();
    std::size_t tail = parts.size(), tail_used = 0;
    while (tail > head && tail_used + parts[tail - 1].size() <= kMaxShownPath / 2)
      tail_used += parts[--tail].size();
    for (std::size_t i = 0; i < head; ++i) text += parts[i];
    text += "...";
    for (std::size_t i = tail; i < parts.size(); ++i) text += parts[i];
    return text;
  }

  // A class's name as a refusal shows it: a guest may name a class at
  // length (Object.const_set("A" * 10**6, Class.new)).
  std::string class_name(mrb_value v) const {
    const char* name = mrb_obj_classname(mrb, v);
    std::string_view text = name ? name : "?";
    if (text.size() <= kMaxShownKey) return std::string(text);
    std::string cut(text.substr(0, core::utf8_cut(text, kMaxShownKey)));
    cut += "...";
    return cut;
  }

  bool fail(std::string_view what) {
    why = place();
    why += ' ';
    why += what;
    return false;
  }

  bool key_text(mrb_value key, std::string_view& text) {
    if (mrb_string_p(key)) {
      text = std::string_view(RSTRING_PTR(key), static_cast<std::size_t>(RSTRING_LEN(key)));
      return true;
    }
    if (mrb_symbol_p(key)) {
      mrb_int len = 0;
      const char* name = mrb_sym_name_len(mrb, mrb_symbol(key), &len);
      text = std::string_view(name ? name : "", static_cast<std::size_t>(len));
      return true;
    }
    return false;
  }

  // `more` bytes about to be appended would take the text past the bound.
  bool over(std::size_t more) const { return more > max_bytes || out.size() > max_bytes - more; }

  bool fail_too_large() {
    too_large = true;
    return fail("takes it past " + std::to_string(max_bytes) + " bytes");
  }

  bool write(mrb_value v, int depth) {
    if (depth > kMaxDepth) return fail("nests deeper than 128 levels (or is cyclic)");
    if (over(0)) return fail_too_large();
    switch (mrb_type(v)) {
      case MRB_TT_FALSE:
        out += mrb_nil_p(v) ? "null" : "false";
        return true;
      case MRB_TT_TRUE:
        out += "true";
        return true;
      case MRB_TT_INTEGER:
        write_integer(mrb_integer(v));
        return true;
      case MRB_TT_FLOAT:
        return write_float(mrb_float(v));
      case MRB_TT_STRING:
        return write_text(
            std::string_view(RSTRING_PTR(v), static_cast<std::size_t>(RSTRING_LEN(v))),
            "is a String that is not valid UTF-8");
      case MRB_TT_SYMBOL: {
        std::string_view s;
        key_text(v, s);
        return write_text(s, "is a Symbol that is not valid UTF-8");
      }
      case MRB_TT_ARRAY:
        return write_array(v, depth);
      case MRB_TT_HASH:
        return write_hash(v, depth);
      default:
        return fail(std::string("is a ") + class_name(v));
    }
  }

  void write_integer(mrb_int i) {
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof buf, static_cast<long long>(i));
    out.append(buf, r.ptr);
  }

  bool write_float(double d) {
    if (!std::isfinite(d)) return fail("is a Float that is not finite");
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, d);
    out.append(buf, r.ptr);
    return true;
  }

  // `refusal` says what the value is when its bytes are not UTF-8.
  bool write_text(std::string_view s, std::string_view refusal) {
    if (!is_valid_utf8(s)) return fail(refusal);
    if (over(s.size() + 2)) return fail_too_large();
    core::append_json_string(out, s);
    return !over(0) || fail_too_large();  // escapes took it past
  }

  bool write_array(mrb_value v, int depth) {
    out.push_back('[');
    for (mrb_int i = 0; i < RARRAY_LEN(v); ++i) {
      if (i > 0) out.push_back(',');
      steps.push_back({i, {}, false});
      if (!write(RARRAY_PTR(v)[i], depth + 1)) return false;
      steps.pop_back();
    }
    out.push_back(']');
    return true;
  }

  // A Hash is walked by mruby (mrb_hash_foreach), one entry per callback.
  struct HashWalk {
    Writer* self;
    int depth;
    bool first = true;
    bool ok = true;
  };

  bool write_hash(mrb_value v, int depth) {
    HashWalk walk{this, depth};
    out.push_back('{');
    mrb_hash_foreach(mrb, mrb_hash_ptr(v), &Writer::write_entry, &walk);
    if (!walk.ok) return false;
    out.push_back('}');
    return true;
  }

  // 0 to go on to the next entry, 1 to stop the walk (walk.ok then false).
  static int write_entry(mrb_state*, mrb_value key, mrb_value val, void* data) {
    auto* walk = static_cast<HashWalk*>(data);
    walk->ok = walk->self->write_member(key, val, *walk);
    return walk->ok ? 0 : 1;
  }

  bool write_member(mrb_value key, mrb_value val, HashWalk& walk) {
    std::string_view text;
    if (!key_text(key, text)) {
      return fail(std::string("has a key that is a ") + class_name(key) +
                  " (keys must be Strings or Symbols)");
    }
    if (!is_valid_utf8(text)) return fail("has a key that is not valid UTF-8");
    if (over(text.size() + 3)) return fail_too_large();
    if (!walk.first) out.push_back(',');
    walk.first = false;
    core::append_json_string(out, text);
    out.push_back(':');
    steps.push_back({0, text, true});
    if (!write(val, walk.depth + 1)) return false;
    steps.pop_back();
    return true;
  }
};

mrb_value build(mrb_state* mrb, const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::null:
      return mrb_nil_value();
    case boost::json::kind::bool_:
      return mrb_bool_value(v.get_bool());
    case boost::json::kind::int64:
      return mrb_int_value(mrb, static_cast<mrb_int>(v.get_int64()));
    case boost::json::kind::uint64: {
      const std::uint64_t u = v.get_uint64();
      if (u <= static_cast<std::uint64_t>(MRB_INT_MAX))
        return mrb_int_value(mrb, static_cast<mrb_int>(u));
      return mrb_float_value(mrb, static_cast<mrb_float>(u));
    }
    case boost::json::kind::double_:
      return mrb_float_value(mrb, v.get_double());
    case boost::json::kind::string: {
      const auto& s = v.get_string();
      return mrb_str_new(mrb, s.data(), s.size());
    }
    case boost::json::kind::array: {
      const auto& a = v.get_array();
      mrb_value ary = mrb_ary_new_capa(mrb, static_cast<mrb_int>(a.size()));
      const int ai = mrb_gc_arena_save(mrb);
      for (const auto& e : a) {
        mrb_ary_push(mrb, ary, build(mrb, e));
        mrb_gc_arena_restore(mrb, ai);
      }
      return ary;
    }
    case boost::json::kind::object: {
      const auto& o = v.get_object();
      mrb_value hash = mrb_hash_new_capa(mrb, static_cast<mrb_int>(o.size()));
      const int ai = mrb_gc_arena_save(mrb);
      for (const auto& e : o) {
        mrb_value key = mrb_str_new(mrb, e.key().data(), e.key().size());
        mrb_hash_set(mrb, hash, key, build(mrb, e.value()));
        mrb_gc_arena_restore(mrb, ai);
      }
      return hash;
    }
  }
  return mrb_nil_value();
}

}  // namespace

JsonStatus to_json(mrb_state* mrb, mrb_value value, std::string& out, std::string& why,
                   std::string_view root, std::size_t max_bytes) {
  Writer writer{mrb, out, why, root, max_bytes, false, {}};
  if (writer.write(value, 0) && (!writer.over(0) || writer.fail_too_large())) {
    return JsonStatus::ok;
  }
  return writer.too_large ? JsonStatus::too_large : JsonStatus::unserializable;
}

bool from_json(mrb_state* mrb, std::string_view text, mrb_value& out) {
  out = mrb_nil_value();
  // corral's parse: doubles read exactly, kMaxParseDepth levels (deeper
  // answers are refused before they get here).
  boost::json::error_code ec;
  boost::json::value parsed = core::json::parse(text, ec);
  if (ec) return false;
  out = build(mrb, parsed);
  return true;
}

}  // namespace corral::sandbox::ruby
