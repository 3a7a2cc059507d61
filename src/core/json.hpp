// src/core/json.hpp: JSON helpers shared by every layer (Boost.JSON inside
// src/ only; the public API speaks JSON text).
#pragma once

#include <boost/json.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>

#include "corral/execution.hpp"
#include "corral/failure.hpp"

namespace corral::core {

// Boost.JSON, with corral's own writer. Code says `json::object`,
// `json::parse` (Boost's, through the using-directive) and `json::serialize`
// (the declarations below, which hide Boost's: a name declared in a namespace
// wins over one a using-directive brings in). Every layer aliases this
// namespace rather than boost::json, so all JSON corral writes, for people or
// machines, goes through one writer.
namespace json {
using namespace boost::json;

// JSON text of a value, in the overloads Boost offers (so calls resolve as
// they did). Unlike Boost 1.81's serializer (2.5E0, 1.8446744073709552E19,
// and "Infinity", which is not JSON) numbers print as people and other JSON
// libraries write them: integers as integers, doubles in the shortest form
// that reads back to the same double (2.5, 1e+21, 0.1), a whole double with
// ".0" so that it reads back as a double, and a non-finite double (only a
// parse of "1e400" or arithmetic can make one) as null, as JSON.stringify does.
std::string serialize(const value& v);
std::string serialize(const array& a);
std::string serialize(const object& o);
std::string serialize(const string& s);
std::string serialize(string_view s);  // a JSON string literal of `s`

// Appends the JSON text of `v` (or `o`) to `out`.
void serialize_to(std::string& out, const value& v);
void serialize_to(std::string& out, const object& o);

// The deepest value corral carries: the engines refuse deeper results and
// tool arguments (unserializable_value), so everything they make fits.
inline constexpr std::size_t kMaxValueDepth = 128;
// The deepest JSON text corral parses: a value of kMaxValueDepth inside the
// envelopes that carry it (frames, JSON-RPC, MCP results). Boost's default
// (32) turned every value deeper than about 31 levels into a parse error,
// which callers then showed as null.
inline constexpr std::size_t kMaxParseDepth = kMaxValueDepth + 32;

// Boost's parse with kMaxParseDepth (these hide Boost's overloads, as
// serialize does): deeper text is an error ("the document exceeds the
// maximum depth"), as any invalid JSON.
value parse(string_view s);  // throws boost::system::system_error
value parse(string_view s, boost::system::error_code& ec);
value parse(string_view s, std::error_code& ec);

}  // namespace json

// Parses `text`; throws std::invalid_argument naming `what` on bad JSON.
json::value parse_json(std::string_view text, std::string_view what);

// True iff `text` is one complete JSON document that is an array.
bool is_json_array(std::string_view text) noexcept;

// True iff `text` is one complete JSON document, valid UTF-8, nested at
// most kMaxValueDepth deep: what a value's text from across a trust
// boundary (a worker's result) must be before corral carries it as text.
// Checks without building anything.
bool is_json_value_text(std::string_view text) noexcept;

// An Execution on the wire: {"value":..,"stdout":..,...} (corral/execution.hpp).
// Its value is JSON text already (ExecutionData::value), so the text form
// splices it in as it is: a result is never parsed again on its way out.
json::object execution_to_object(const Execution& execution);
void append_execution_json(std::string& out, const Execution& execution);
// Every field but the value, which travels apart as text (the pool's
// frames) and comes back with execution_from_fields.
json::object execution_fields(const Execution& execution);
Execution execution_from_object(const json::object& object);
// `value` must be JSON text (checked with is_json_value_text when it
// crossed a trust boundary).
Execution execution_from_fields(const json::object& fields, std::string value);

// {"code":..,"message":..,"retryable":..,"execution":..?}
json::object failure_to_object(const Failure& failure);
// Throws std::invalid_argument when `object` is not a failure envelope.
Failure failure_from_object(const json::object& object);

}  // namespace corral::core
