// src/sandbox/v8/values.hpp: JavaScript values out of the isolate, as JSON
// (results and tool arguments: values.cc) or as text (console output:
// console_format.cc).
#pragma once

#include <v8.h>

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace corral::sandbox::v8engine {

enum class JsonStatus {
  ok,
  unserializable,  // `why` says which part has no JSON form
  exception,       // guest code (a getter, toJSON, a proxy trap) threw; it is pending
  too_large,       // the JSON would pass `max_bytes`; `why` says where it crossed
  stopped,         // `stopped()` turned true (the run's deadline or a cancel)
};

// What bounds one conversion. Sizes are checked before a string is copied
// out of the isolate, so a huge (even unflattened) guest string costs the
// host nothing past the bound.
struct JsonBounds {
  std::size_t max_bytes = std::size_t{1} << 30;
  // Polled every few thousand elements: a long loop over a sparse array
  // runs no JavaScript, so V8's own termination never reaches it.
  std::function<bool()> stopped;
};

// Appends `value` as JSON to `out`. JSON has no form for functions, symbols,
// BigInt, NaN/Infinity, cycles, Map/Set/Promise/RegExp/typed arrays, or
// nesting past 128 levels: those are `unserializable`, never silently
// dropped. Object properties whose value is undefined are omitted and
// undefined array elements become null, as JSON.stringify does; toJSON()
// is honoured (so a Date becomes its ISO string).
JsonStatus write_json(v8::Local<v8::Context> context, v8::Local<v8::Value> value, std::string& out,
                      std::string& why, const JsonBounds& bounds = {});

// Formats console.log's arguments the way Node prints them, on one line:
// strings raw at top level, objects as `{ a: 1, b: 'x' }`, arrays as
// `[ 1, 2 ]`, nesting past depth 2 as [Object], cycles as [Circular],
// and printf-style %s %d %i %f %j %o %O %c %% in a leading format string.
// Formatting stops once `out` holds more than `max_bytes` (the caller's
// output channel keeps no more than that anyway), so a huge argument is
// never copied whole; `*cut` says whether anything was left out. Returns
// false if guest code threw while formatting (exception pending).
bool format_console_line(v8::Local<v8::Context> context,
                         const v8::FunctionCallbackInfo<v8::Value>& info, int first,
                         std::string& out, std::size_t max_bytes = std::size_t{1} << 30,
                         bool* cut = nullptr);

// The keys JSON.stringify and console.log show: own, enumerable, strings.
v8::MaybeLocal<v8::Array> own_enumerable_keys(v8::Local<v8::Context> context,
                                              v8::Local<v8::Object> object);

// A V8 string from UTF-8 text; the empty string if V8 refuses it (too long).
v8::Local<v8::String> v8_string(v8::Isolate* isolate, std::string_view text);

// UTF-8 of a string (lone surrogates become U+FFFD).
std::string utf8(v8::Isolate* isolate, v8::Local<v8::String> string);

// Appends at most `max_bytes` of `string`'s UTF-8 to `out`, never half a
// character; returns false if it was cut. Only that much is copied.
bool append_utf8_prefix(v8::Isolate* isolate, v8::Local<v8::String> string, std::size_t max_bytes,
                        std::string& out);

}  // namespace corral::sandbox::v8engine
