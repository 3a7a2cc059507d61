// src/sandbox/v8/values.hpp: JavaScript values out of the isolate, as JSON
// (results and tool arguments) or as text (console output).
#pragma once

#include <v8.h>

#include <string>
#include <string_view>

namespace corral::sandbox::v8engine {

enum class JsonStatus {
  ok,
  unserializable,  // `why` says which part has no JSON form
  exception,       // guest code (a getter, toJSON, a proxy trap) threw; it is pending
};

// Appends `value` as JSON to `out`. JSON has no form for functions, symbols,
// BigInt, NaN/Infinity, cycles, Map/Set/Promise/RegExp/typed arrays, or
// nesting past 128 levels: those are `unserializable`, never silently
// dropped. Object properties whose value is undefined are omitted and
// undefined array elements become null, as JSON.stringify does; toJSON()
// is honoured (so a Date becomes its ISO string).
JsonStatus write_json(v8::Local<v8::Context> context, v8::Local<v8::Value> value, std::string& out,
                      std::string& why);

// Formats console.log's arguments the way Node prints them, on one line:
// strings raw at top level, objects as `{ a: 1, b: 'x' }`, arrays as
// `[ 1, 2 ]`, nesting past depth 2 as [Object], cycles as [Circular],
// and printf-style %s %d %i %f %j %o %O %c %% in a leading format string.
// Returns false if guest code threw while formatting (exception pending).
bool format_console_line(v8::Local<v8::Context> context,
                         const v8::FunctionCallbackInfo<v8::Value>& info, int first,
                         std::string& out);

// A V8 string from UTF-8 text; the empty string if V8 refuses it (too long).
v8::Local<v8::String> v8_string(v8::Isolate* isolate, std::string_view text);

// UTF-8 of a string (lone surrogates become U+FFFD).
std::string utf8(v8::Isolate* isolate, v8::Local<v8::String> string);

}  // namespace corral::sandbox::v8engine
