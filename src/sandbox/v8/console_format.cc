// Console lines as Node prints them (format_console_line, values.hpp):
// console.log's arguments inspected to a bounded depth and width, printf-style
// directives in a leading format string, cut once the line passes its bound.
#include "sandbox/v8/values.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "sandbox/identifier.hpp"

namespace corral::sandbox::v8engine {
namespace {

constexpr int kMaxInspectDepth = 2;
constexpr uint32_t kMaxInspectItems = 100;

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
