// JavaScript values as JSON (a run's value, tool arguments) with the bounds
// that keep a hostile value from costing the host past its limit, and the
// conversions between V8 strings and UTF-8 both halves of values.hpp use.
// Console formatting is console_format.cc.
#include "sandbox/v8/values.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <memory>
#include <optional>
#include <vector>

#include "core/json_string.hpp"

namespace corral::sandbox::v8engine {
namespace {

constexpr int kMaxJsonDepth = 128;
// How often a loop over a guest container asks whether the run was stopped.
constexpr uint32_t kStopCheckEvery = 4096;

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
    if (value->IsObject() && !value->IsFunction() && !apply_to_json(value)) {
      return JsonStatus::exception;
    }
    if (value->IsUndefined()) {
      skip = true;
      return JsonStatus::ok;
    }
    if (const std::optional<JsonStatus> status = write_primitive(value, path)) return *status;
    if (const char* reason = refusal(value)) return unserializable(path, reason);
    return write_container(value.As<v8::Object>(), path, depth);
  }

 private:
  // toJSON first, as JSON.stringify does (Date has one): `value` becomes what
  // it returns. False when guest code threw.
  bool apply_to_json(v8::Local<v8::Value>& value) {
    v8::Local<v8::Object> object = value.As<v8::Object>();
    v8::Local<v8::Value> to_json;
    if (!object->Get(context_, v8_string(isolate_, "toJSON")).ToLocal(&to_json)) return false;
    if (!to_json->IsFunction()) return true;
    v8::Local<v8::Value> key = v8_string(isolate_, "");
    return to_json.As<v8::Function>()->Call(context_, object, 1, &key).ToLocal(&value);
  }

  // null, booleans, numbers, strings and their boxed forms, written; BigInt,
  // Symbol and functions, refused. Nothing for any other value.
  std::optional<JsonStatus> write_primitive(v8::Local<v8::Value> value, const std::string& path) {
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
    return std::nullopt;
  }

  // Why an object that is no plain object or array has no JSON form;
  // nullptr for a plain object or array.
  static const char* refusal(v8::Local<v8::Value> value) {
    if (value->IsMap() || value->IsWeakMap()) {
      return "is a Map (convert it with Object.fromEntries)";
    }
    if (value->IsSet() || value->IsWeakSet()) return "is a Set (convert it with Array.from)";
    if (value->IsPromise()) return "is a Promise (await it first)";
    if (value->IsArrayBufferView() || value->IsArrayBuffer()) {
      return "is binary data (convert it with Array.from)";
    }
    if (value->IsRegExp()) return "is a RegExp";
    if (value->IsBigIntObject() || value->IsSymbolObject()) return "is a boxed BigInt or Symbol";
    if (!value->IsObject()) return "has no JSON form";
    return nullptr;
  }

  JsonStatus write_container(v8::Local<v8::Object> object, const std::string& path, int depth) {
    for (const auto& open : stack_) {
      if (open == object) return unserializable(path, "is a cycle (it contains itself)");
    }
    stack_.push_back(object);
    const JsonStatus status = object->IsArray() ? write_array(object.As<v8::Array>(), path, depth)
                                                : write_object(object, path, depth);
    stack_.pop_back();
    return status;
  }

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
      const std::size_t fits =
          bounds_.max_bytes > out_.size() ? (bounds_.max_bytes - out_.size()) / 2 : 0;
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

}  // namespace

v8::MaybeLocal<v8::Array> own_enumerable_keys(v8::Local<v8::Context> context,
                                              v8::Local<v8::Object> object) {
  return object->GetOwnPropertyNames(
      context, static_cast<v8::PropertyFilter>(v8::ONLY_ENUMERABLE | v8::SKIP_SYMBOLS),
      v8::KeyConversionMode::kConvertToString);
}

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

}  // namespace corral::sandbox::v8engine
