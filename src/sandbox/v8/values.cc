#include "sandbox/v8/values.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include "core/json_string.hpp"
#include "sandbox/identifier.hpp"

namespace corral::sandbox::v8engine {
namespace {

constexpr int kMaxJsonDepth = 128;
constexpr int kMaxInspectDepth = 2;
constexpr uint32_t kMaxInspectItems = 100;
// How often a loop over a guest container asks whether the run was stopped.
constexpr uint32_t kStopCheckEvery = 4096;

// The keys JSON.stringify and console.log show: own, enumerable, strings.
v8::MaybeLocal<v8::Array> own_enumerable_keys(v8::Local<v8::Context> context,
                                              v8::Local<v8::Object> object) {
  return object->GetOwnPropertyNames(
      context, static_cast<v8::PropertyFilter>(v8::ONLY_ENUMERABLE | v8::SKIP_SYMBOLS),
      v8::KeyConversionMode::kConvertToString);
}

using core::append_json_string;

void append_number(std::string& out, double number) {
  if (number == 0) {
    out.push_back('0');  // -0 has no JSON form of its own
    return;
  }
  // Like JavaScript: plain digits below 1e21, exponent notation above.
  char buf[400];
  const auto format = std::fabs(number) < 1e21 && std::fabs(number) >= 1e-7
                          ? std::chars_format::fixed
                          : std::chars_format::scientific;
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, number, format);
  out.append(buf, end);
}

class JsonWriter {
 public:
  JsonWriter(v8::Local<v8::Context> context, std::string& out, std::string& why,
             const JsonBounds& bounds)
      : context_(context), isolate_(context->GetIsolate()), out_(out), why_(why), bounds_(bounds) {}

  // Returns ok, unserializable or exception. `skip` is set when the value is
  // undefined (or becomes undefined through toJSON) so a property can be
  // omitted.
  JsonStatus write(v8::Local<v8::Value> value, const std::string& path, int depth, bool& skip) {
    skip = false;
    if (depth > kMaxJsonDepth) {
      return unserializable(path, "nests deeper than 128 levels");
    }
    if (value->IsObject() && !value->IsFunction()) {
      // toJSON first, as JSON.stringify does (Date has one).
      v8::Local<v8::Object> object = value.As<v8::Object>();
      v8::Local<v8::Value> to_json;
      if (!object->Get(context_, v8_string(isolate_, "toJSON")).ToLocal(&to_json)) {
        return JsonStatus::exception;
      }
      if (to_json->IsFunction()) {
        v8::Local<v8::Value> key = v8_string(isolate_, "");
        if (!to_json.As<v8::Function>()->Call(context_, object, 1, &key).ToLocal(&value)) {
          return JsonStatus::exception;
        }
      }
    }
    if (value->IsUndefined()) {
      skip = true;
      return JsonStatus::ok;
    }
    if (value->IsNull()) {
      out_ += "null";
      return JsonStatus::ok;
    }
    if (value->IsTrue()) {
      out_ += "true";
      return JsonStatus::ok;
    }
    if (value->IsFalse()) {
      out_ += "false";
      return JsonStatus::ok;
    }
    if (value->IsNumber()) {
      const double number = value.As<v8::Number>()->Value();
      if (!std::isfinite(number)) return unserializable(path, "is NaN or Infinity");
      append_number(out_, number);
      return JsonStatus::ok;
    }
    if (value->IsString()) return write_string(value.As<v8::String>(), path);
    if (value->IsBigInt()) return unserializable(path, "is a BigInt");
    if (value->IsSymbol()) return unserializable(path, "is a Symbol");
    if (value->IsFunction()) return unserializable(path, "is a function");
    if (value->IsNumberObject()) {
      append_number(out_, value.As<v8::NumberObject>()->ValueOf());
      return JsonStatus::ok;
    }
    if (value->IsStringObject()) {
      return write_string(value.As<v8::StringObject>()->ValueOf(), path);
    }
    if (value->IsBooleanObject()) {
      out_ += value.As<v8::BooleanObject>()->ValueOf() ? "true" : "false";
      return JsonStatus::ok;
    }
    if (value->IsMap() || value->IsWeakMap()) {
      return unserializable(path, "is a Map (convert it with Object.fromEntries)");
    }
    if (value->IsSet() || value->IsWeakSet()) {
      return unserializable(path, "is a Set (convert it with Array.from)");
    }
    if (value->IsPromise()) return unserializable(path, "is a Promise (await it first)");
    if (value->IsArrayBufferView() || value->IsArrayBuffer()) {
      return unserializable(path, "is binary data (convert it with Array.from)");
    }
    if (value->IsRegExp()) return unserializable(path, "is a RegExp");
    if (value->IsBigIntObject() || value->IsSymbolObject()) {
      return unserializable(path, "is a boxed BigInt or Symbol");
    }
    if (!value->IsObject()) return unserializable(path, "has no JSON form");

    v8::Local<v8::Object> object = value.As<v8::Object>();
    for (const auto& open : stack_) {
      if (open == object) return unserializable(path, "is a cycle (it contains itself)");
    }
    stack_.push_back(object);
    const JsonStatus status = value->IsArray() ? write_array(value.As<v8::Array>(), path, depth)
                                               : write_object(object, path, depth);
    stack_.pop_back();
    return status;
  }

 private:
  // Each UTF-16 unit is at least one byte of JSON, so a string that cannot
  // fit is refused by its length alone, before V8 flattens or copies it.
  JsonStatus write_string(v8::Local<v8::String> string, const std::string& path) {
    if (out_.size() + static_cast<std::size_t>(string->Length()) + 2 > bounds_.max_bytes) {
      return too_large(path);
    }
    append_json_string(out_, utf8(isolate_, string));
    return out_.size() > bounds_.max_bytes ? too_large(path) : JsonStatus::ok;
  }

  // Between the elements of a container: the size so far, and now and then
  // whether the run was stopped.
  JsonStatus check_progress(const std::string& path, uint32_t i, bool array) {
    if (out_.size() > bounds_.max_bytes) {
      return too_large(array ? path + "[" + std::to_string(i) + "]" : path);
    }
    if (i % kStopCheckEvery == 0 && bounds_.stopped && bounds_.stopped()) {
      return JsonStatus::stopped;
    }
    return JsonStatus::ok;
  }

  JsonStatus write_array(v8::Local<v8::Array> array, const std::string& path, int depth) {
    out_.push_back('[');
    const uint32_t length = array->Length();
    // Every element costs at least two bytes of JSON (a digit or "null", and
    // a comma), so a long array (sparse ones cost nothing in the heap) that
    // cannot fit is refused by its length, before billions of holes are
    // walked one Get() at a time.
    if (length > 0 && out_.size() + 2 * std::size_t{length} > bounds_.max_bytes) {
      const std::size_t fits = bounds_.max_bytes > out_.size() ? (bounds_.max_bytes - out_.size()) / 2 : 0;
      return too_large(path + "[" + std::to_string(std::min<std::size_t>(fits, length - 1)) + "]");
    }
    for (uint32_t i = 0; i < length; ++i) {
      if (const JsonStatus status = check_progress(path, i, true); status != JsonStatus::ok) {
        return status;
      }
      if (i) out_.push_back(',');
      v8::Local<v8::Value> element;
      if (!array->Get(context_, i).ToLocal(&element)) return JsonStatus::exception;
      bool skip = false;
      const std::string child = path + "[" + std::to_string(i) + "]";
      const JsonStatus status = write(element, child, depth + 1, skip);
      if (status != JsonStatus::ok) return status;
      if (skip) out_ += "null";
    }
    out_.push_back(']');
    return JsonStatus::ok;
  }

  JsonStatus write_object(v8::Local<v8::Object> object, const std::string& path, int depth) {
    v8::Local<v8::Array> keys;
    if (!own_enumerable_keys(context_, object).ToLocal(&keys)) return JsonStatus::exception;
    out_.push_back('{');
    bool first = true;
    for (uint32_t i = 0; i < keys->Length(); ++i) {
      if (const JsonStatus status = check_progress(path, i, false); status != JsonStatus::ok) {
        return status;
      }
      v8::Local<v8::Value> key;
      v8::Local<v8::Value> member;
      if (!keys->Get(context_, i).ToLocal(&key) || !object->Get(context_, key).ToLocal(&member)) {
        return JsonStatus::exception;
      }
      if (out_.size() + static_cast<std::size_t>(key.As<v8::String>()->Length()) >
          bounds_.max_bytes) {
        return too_large(path);
      }
      const std::string name = utf8(isolate_, key.As<v8::String>());
      const std::size_t mark = out_.size();
      if (!first) out_.push_back(',');
      append_json_string(out_, name);
      out_.push_back(':');
      bool skip = false;
      const JsonStatus status = write(member, path + "." + name, depth + 1, skip);
      if (status != JsonStatus::ok) return status;
      if (skip) {
        out_.resize(mark);  // undefined members are omitted, as in JSON.stringify
      } else {
        first = false;
      }
    }
    out_.push_back('}');
    return JsonStatus::ok;
  }

  JsonStatus unserializable(const std::string& path, const char* reason) {
    why_ = path + " " + reason;
    return JsonStatus::unserializable;
  }

  JsonStatus too_large(const std::string& path) {
    why_ = path + " takes it past " + std::to_string(bounds_.max_bytes) + " bytes";
    return JsonStatus::too_large;
  }

  v8::Local<v8::Context> context_;
  v8::Isolate* isolate_;
  std::string& out_;
  std::string& why_;
  const JsonBounds& bounds_;
  std::vector<v8::Local<v8::Object>> stack_;
};

// ---- console formatting -------------------------------------------------

void append_quoted(std::string& out, std::string_view text) {
  out.push_back('\'');
  for (char c : text) {
    if (c == '\'')
      out += "\\'";
    else if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out.push_back(c);
  }
  out.push_back('\'');
}

std::string iso_date(double millis) {
  if (!std::isfinite(millis)) return "Invalid Date";
  const auto total_ms = static_cast<long long>(std::floor(millis));
  long long days = total_ms / 86400000;
  long long ms_of_day = total_ms % 86400000;
  if (ms_of_day < 0) {
    ms_of_day += 86400000;
    --days;
  }
  // Civil-from-days (proleptic Gregorian).
  const long long z = days + 719468;
  const long long era = (z >= 0 ? z : z - 146096) / 146097;
  const long long doe = z - era * 146097;
  const long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  long long year = yoe + era * 400;
  const long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const long long mp = (5 * doy + 2) / 153;
  const long long day = doy - (153 * mp + 2) / 5 + 1;
  const long long month = mp < 10 ? mp + 3 : mp - 9;
  if (month <= 2) ++year;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld.%03lldZ", year, month,
                day, ms_of_day / 3600000, ms_of_day / 60000 % 60, ms_of_day / 1000 % 60,
                ms_of_day % 1000);
  return buf;
}

class Inspector {
 public:
  Inspector(v8::Local<v8::Context> context, std::size_t max_bytes)
      : context_(context), isolate_(context->GetIsolate()), max_bytes_(max_bytes) {}

  // Past the bound, nothing more is formatted (the line is cut anyway).
  bool full(const std::string& out) const { return out.size() > max_bytes_; }

  // What may still be appended: up to one byte past the bound, so the cut
  // is still seen.
  std::size_t room(const std::string& out) const {
    return full(out) ? 0 : max_bytes_ + 1 - out.size();
  }

  void append_text(v8::Local<v8::String> text, std::string& out) {
    if (!append_utf8_prefix(isolate_, text, room(out), out)) cut_ = true;
  }

  // True once anything was left out for the bound.
  bool cut(const std::string& out) const { return cut_ || full(out); }
  void mark_cut() { cut_ = true; }

  bool inspect(v8::Local<v8::Value> value, int depth, bool top, std::string& out) {
    if (full(out)) return true;
    if (value->IsString()) {
      if (top) {
        append_text(value.As<v8::String>(), out);
      } else {
        std::string text;
        if (!append_utf8_prefix(isolate_, value.As<v8::String>(), room(out), text)) cut_ = true;
        append_quoted(out, text);
      }
      return true;
    }
    if (value->IsUndefined()) return out += "undefined", true;
    if (value->IsNull()) return out += "null", true;
    if (value->IsNumber() || value->IsBoolean()) {
      const double n = value->IsNumber() ? value.As<v8::Number>()->Value() : 0;
      if (value->IsNumber() && n == 0 && std::signbit(n)) return out += "-0", true;
      return to_text(value, out);
    }
    if (value->IsBigInt()) {
      if (!to_text(value, out)) return false;
      return out += "n", true;
    }
    if (value->IsSymbol()) {
      v8::Local<v8::Value> description = value.As<v8::Symbol>()->Description(isolate_);
      out += "Symbol(";
      if (description->IsString()) append_text(description.As<v8::String>(), out);
      return out += ")", true;
    }
    if (value->IsFunction()) {
      v8::Local<v8::String> name = value.As<v8::Function>()->GetName().As<v8::String>();
      if (name->Length() == 0) return out += "[Function (anonymous)]", true;
      out += "[Function: ";
      append_text(name, out);
      return out += "]", true;
    }
    v8::Local<v8::Object> object = value.As<v8::Object>();
    if (value->IsNativeError()) {
      v8::Local<v8::Value> stack;
      if (!object->Get(context_, v8_string(isolate_, "stack")).ToLocal(&stack)) return false;
      if (stack->IsString()) return append_text(stack.As<v8::String>(), out), true;
      return to_text(value, out);
    }
    if (value->IsDate()) return out += iso_date(value.As<v8::Date>()->ValueOf()), true;
    if (value->IsRegExp()) return to_text(value, out);
    for (const auto& open : stack_) {
      if (open == object) return out += "[Circular]", true;
    }
    if (depth > kMaxInspectDepth) {
      out += value->IsArray() ? "[Array]" : "[Object]";
      return true;
    }
    stack_.push_back(object);
    const bool ok = inspect_object(object, depth, out);
    stack_.pop_back();
    return ok;
  }

 private:
  bool to_text(v8::Local<v8::Value> value, std::string& out) {
    v8::Local<v8::String> text;
    if (!value->ToString(context_).ToLocal(&text)) return false;
    append_text(text, out);
    return true;
  }

  bool list(v8::Local<v8::Array> items, int depth, const char* open, const char* close,
            const char* separator_in_pair, std::string& out) {
    const uint32_t length = items->Length();
    if (length == 0) return out += std::string(open) + close, true;
    out += open;
    out += ' ';
    const uint32_t step = separator_in_pair ? 2 : 1;
    const uint32_t shown = std::min(length, kMaxInspectItems * step);
    for (uint32_t i = 0; i < shown && !full(out); i += step) {
      if (i) out += ", ";
      v8::Local<v8::Value> item;
      if (!items->Get(context_, i).ToLocal(&item) || !inspect(item, depth + 1, false, out)) {
        return false;
      }
      if (separator_in_pair) {
        out += separator_in_pair;
        if (!items->Get(context_, i + 1).ToLocal(&item) || !inspect(item, depth + 1, false, out)) {
          return false;
        }
      }
    }
    if (shown < length) out += ", ... " + std::to_string((length - shown) / step) + " more items";
    out += ' ';
    out += close;
    return true;
  }

  bool inspect_object(v8::Local<v8::Object> object, int depth, std::string& out) {
    if (object->IsMap()) {
      out += "Map(" + std::to_string(object.As<v8::Map>()->Size()) + ") ";
      return list(object.As<v8::Map>()->AsArray(), depth, "{", "}", " => ", out);
    }
    if (object->IsSet()) {
      out += "Set(" + std::to_string(object.As<v8::Set>()->Size()) + ") ";
      return list(object.As<v8::Set>()->AsArray(), depth, "{", "}", nullptr, out);
    }
    if (object->IsPromise()) {
      v8::Local<v8::Promise> promise = object.As<v8::Promise>();
      switch (promise->State()) {
        case v8::Promise::kPending:
          return out += "Promise { <pending> }", true;
        case v8::Promise::kFulfilled:
          out += "Promise { ";
          if (!inspect(promise->Result(), depth + 1, false, out)) return false;
          return out += " }", true;
        case v8::Promise::kRejected:
          out += "Promise { <rejected> ";
          if (!inspect(promise->Result(), depth + 1, false, out)) return false;
          return out += " }", true;
      }
    }
    if (object->IsArrayBuffer()) {
      out += "ArrayBuffer { byteLength: " +
             std::to_string(object.As<v8::ArrayBuffer>()->ByteLength()) + " }";
      return true;
    }
    if (object->IsArray()) return list(object.As<v8::Array>(), depth, "[", "]", nullptr, out);
    if (object->IsTypedArray()) {
      const std::string name = utf8(isolate_, object->GetConstructorName());
      const size_t length = object.As<v8::TypedArray>()->Length();
      out += name + "(" + std::to_string(length) + ") [";
      const size_t shown = std::min<size_t>(length, kMaxInspectItems);
      for (size_t i = 0; i < shown && !full(out); ++i) {
        out += i ? ", " : " ";
        v8::Local<v8::Value> item;
        if (!object->Get(context_, static_cast<uint32_t>(i)).ToLocal(&item) ||
            !inspect(item, depth + 1, false, out)) {
          return false;
        }
      }
      if (shown < length) out += ", ... " + std::to_string(length - shown) + " more items";
      out += length ? " ]" : "]";
      return true;
    }

    v8::Local<v8::Array> keys;
    if (!own_enumerable_keys(context_, object).ToLocal(&keys)) return false;
    const std::string constructor = utf8(isolate_, object->GetConstructorName());
    if (object->GetPrototype()->IsNull())
      out += "[Object: null prototype] ";
    else if (constructor != "Object" && !constructor.empty())
      out += constructor + " ";
    if (keys->Length() == 0) return out += "{}", true;
    out += "{ ";
    const uint32_t shown = std::min(keys->Length(), kMaxInspectItems);
    for (uint32_t i = 0; i < shown && !full(out); ++i) {
      if (i) out += ", ";
      v8::Local<v8::Value> key;
      v8::Local<v8::Value> member;
      if (!keys->Get(context_, i).ToLocal(&key) || !object->Get(context_, key).ToLocal(&member)) {
        return false;
      }
      std::string name;
      if (!append_utf8_prefix(isolate_, key.As<v8::String>(), room(out), name)) cut_ = true;
      if (is_identifier(name))
        out += name;
      else
        append_quoted(out, name);
      out += ": ";
      if (!inspect(member, depth + 1, false, out)) return false;
    }
    if (shown < keys->Length()) {
      out += ", ... " + std::to_string(keys->Length() - shown) + " more items";
    }
    out += " }";
    return true;
  }

  v8::Local<v8::Context> context_;
  v8::Isolate* isolate_;
  std::size_t max_bytes_;
  bool cut_ = false;
  std::vector<v8::Local<v8::Object>> stack_;
};

}  // namespace

v8::Local<v8::String> v8_string(v8::Isolate* isolate, std::string_view text) {
  v8::Local<v8::String> out;
  if (text.size() > static_cast<std::size_t>(v8::String::kMaxLength) ||
      !v8::String::NewFromUtf8(isolate, text.data(), v8::NewStringType::kNormal,
                               static_cast<int>(text.size()))
           .ToLocal(&out)) {
    return v8::String::Empty(isolate);
  }
  return out;
}

std::string utf8(v8::Isolate* isolate, v8::Local<v8::String> string) {
  const int length = string->Utf8Length(isolate);
  std::string out(static_cast<std::size_t>(length), '\0');
  string->WriteUtf8(isolate, out.data(), length, nullptr,
                    v8::String::NO_NULL_TERMINATION | v8::String::REPLACE_INVALID_UTF8);
  return out;
}

bool append_utf8_prefix(v8::Isolate* isolate, v8::Local<v8::String> string, std::size_t max_bytes,
                        std::string& out) {
  const auto length = static_cast<std::size_t>(string->Length());
  // A UTF-16 unit takes at most three bytes of UTF-8.
  if (length <= max_bytes / 3) {
    out += utf8(isolate, string);
    return true;
  }
  // WriteUtf8 writes whole characters only, and no more than asked; the
  // buffer is not zero-filled, so only what is written is touched.
  const std::size_t capacity = std::min<std::size_t>({max_bytes, length * 3, INT_MAX});
  std::unique_ptr<char[]> buffer(new char[capacity]);
  int units = 0;
  const int written =
      string->WriteUtf8(isolate, buffer.get(), static_cast<int>(capacity), &units,
                        v8::String::NO_NULL_TERMINATION | v8::String::REPLACE_INVALID_UTF8);
  out.append(buffer.get(), static_cast<std::size_t>(written));
  return static_cast<std::size_t>(units) >= length;
}

JsonStatus write_json(v8::Local<v8::Context> context, v8::Local<v8::Value> value, std::string& out,
                      std::string& why, const JsonBounds& bounds) {
  JsonWriter writer(context, out, why, bounds);
  bool skip = false;
  const JsonStatus status = writer.write(value, "value", 0, skip);
  if (status == JsonStatus::ok && skip) out += "null";
  return status;
}

bool format_console_line(v8::Local<v8::Context> context,
                         const v8::FunctionCallbackInfo<v8::Value>& info, int first,
                         std::string& out, std::size_t max_bytes, bool* cut) {
  v8::Isolate* isolate = context->GetIsolate();
  Inspector inspector(context, max_bytes);
  int next = first;
  if (next < info.Length() && info[next]->IsString()) {
    std::string format;
    if (!append_utf8_prefix(isolate, info[next].As<v8::String>(), max_bytes + 1, format)) {
      inspector.mark_cut();
    }
    ++next;
    for (std::size_t i = 0; i < format.size() && !inspector.full(out); ++i) {
      if (format[i] != '%' || i + 1 >= format.size()) {
        out.push_back(format[i]);
        continue;
      }
      const char spec = format[i + 1];
      if (spec == '%') {
        out.push_back('%');
        ++i;
        continue;
      }
      if (std::string_view("sdifjoOc").find(spec) == std::string_view::npos) {
        out.push_back('%');
        continue;
      }
      ++i;
      if (next >= info.Length()) {
        out.push_back('%');
        out.push_back(spec);
        continue;
      }
      v8::Local<v8::Value> arg = info[next++];
      if (spec == 'c') continue;  // CSS: ignored, as in Node
      if (spec == 'd' || spec == 'i' || spec == 'f') {
        v8::Local<v8::Number> number;
        if (arg->IsBigInt()) {
          if (!inspector.inspect(arg, 0, true, out)) return false;
          continue;
        }
        if (!arg->ToNumber(context).ToLocal(&number)) return false;
        double n = number->Value();
        if (spec != 'f' && std::isfinite(n)) n = std::trunc(n);
        if (!inspector.inspect(v8::Number::New(isolate, n), 0, true, out)) return false;
        continue;
      }
      if (spec == 'j') {
        std::string why;
        std::string json;
        const JsonStatus status =
            write_json(context, arg, json, why, {.max_bytes = inspector.room(out), .stopped = {}});
        if (status == JsonStatus::exception) return false;
        if (status == JsonStatus::unserializable || status == JsonStatus::stopped) {
          out += "[Unserializable]";
        } else {
          if (status == JsonStatus::too_large) inspector.mark_cut();
          out += json;
        }
        continue;
      }
      if (!inspector.inspect(arg, 0, spec == 's', out)) return false;
    }
  }
  for (; next < info.Length() && !inspector.full(out); ++next) {
    if (!out.empty() || next > first) out.push_back(' ');
    if (!inspector.inspect(info[next], 0, true, out)) return false;
  }
  if (cut) *cut = inspector.cut(out);
  return true;
}

}  // namespace corral::sandbox::v8engine
