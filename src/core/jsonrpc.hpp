// src/core/jsonrpc.hpp: JSON-RPC 2.0 messages, written and read in one
// place for every channel that speaks it (the executor server and client,
// the MCP session and its stdio upstreams). No I/O, no state: the callers
// own the sockets; docs/protocol.md describes what these functions write.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/json.hpp"
#include "corral/failure.hpp"

namespace corral::core::jsonrpc {

// JSON-RPC 2.0's error codes (never a run's failure: those travel inside
// the result envelope).
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;

// Id: a JSON-RPC id exactly as the peer wrote it. Boost.JSON reads a number
// into a double or a 64-bit integer, so an id such as
// 123456789012345678901234567890, 1e2, -0 or 1.50 would come back
// re-rendered; an Id keeps the token's bytes (a string's quotes and escapes
// too) and the builders below write them verbatim. Two Ids are equal when
// their bytes are.
class Id {
 public:
  Id() = default;  // null
  // The JSON text of `value` (a string, a number or null; anything else is
  // null). For ids corral makes itself ("c1"), not for ones it received.
  explicit Id(const json::value& value);
  // The id whose text is `token`, if `token` is exactly one JSON string,
  // number or null (no surrounding whitespace); otherwise nullopt.
  static std::optional<Id> from_token(std::string_view token);

  // The JSON text, byte for byte as received ("null" for a null id).
  const std::string& text() const { return text_; }
  bool is_null() const { return text_ == "null"; }
  bool is_string() const { return text_.front() == '"'; }
  bool is_number() const { return !is_null() && !is_string(); }
  // The id read as a value (a number may lose digits: never write it back).
  json::value value() const;

  bool operator==(const Id&) const = default;

 private:
  std::string text_ = "null";
};

// {"jsonrpc":"2.0","id":id,"result":result}
std::string result_message(const json::value& id, json::value result);
// {"jsonrpc":"2.0","id":id,"error":{"code":code,"message":..,"data":{"code":failure}}}:
// the executor protocol's errors name the failure code they stand for.
std::string error_message(const json::value& id, int code, std::string_view message,
                          FailureCode failure);
// {"jsonrpc":"2.0","id":id,"error":{"code":code,"message":..}}: MCP's errors.
std::string error_message(const json::value& id, int code, std::string_view message);
// {"jsonrpc":"2.0","id":id,"method":method,"params":params} (no params when null)
std::string request_message(const json::value& id, std::string_view method, json::value params);
// {"jsonrpc":"2.0","method":method,"params":params} (no params when null)
std::string notification_message(std::string_view method, json::value params);

// The same messages with an Id written verbatim (same member order and bytes
// as the json::value overloads for an id those render the same way).
std::string result_message(const Id& id, const json::value& result);
// `result_json` must be one JSON text; it is copied as is.
std::string result_message_text(const Id& id, std::string_view result_json);
std::string error_message(const Id& id, int code, std::string_view message, FailureCode failure);
std::string error_message(const Id& id, int code, std::string_view message);

// The raw JSON text of member `key` of the object `text` (text a JSON parser
// accepted; keys compare after unescaping; the last one when a key repeats),
// or nothing: how a receiver reads an id's token without re-rendering it.
std::optional<std::string_view> raw_member(std::string_view text, std::string_view key);

// Incoming: what one JSON-RPC text message asks its receiver to do
// (decode() below). Exactly one of:
//  - request: a call the session answers (`id`, `method`, `params`);
//  - response: the peer's answer to a server call (`id`, and `error` when it
//    has one, else `result`): the session matches `id` to its tool.call;
//  - reply: a message the session sends back at once (`reply`, a complete
//    JSON-RPC error) because the input is not valid JSON (-32700) or not a
//    valid JSON-RPC 2.0 request or response (-32600);
//  - ignore: a notification (a request without id), answered with nothing.
struct Incoming {
  enum class Kind { request, response, reply, ignore };
  Kind kind = Kind::ignore;
  Id id;                              // request, response, reply (the id it answers)
  std::string method;                 // request, ignore
  std::optional<json::value> params;  // request: absent when the message has none
  json::value result;                 // response without error
  std::optional<json::value> error;   // response: the error member, when present
  std::string reply;                  // reply
};

// Decodes one JSON-RPC text message (docs/protocol.md, "Errors"). Pure: no
// I/O, no state. The rules, JSON-RPC 2.0's with corral's choices marked (*):
//  - not JSON, or nested deeper than json::kMaxParseDepth, or not UTF-8:
//    -32700, id null;
//  - an array (a batch, empty or not): -32600 "Batches are not supported."
//    (*), id null; any other non-object: -32600, id null;
//  - a member that matters (jsonrpc, id, method, params, result, error)
//    given twice (JSON leaves duplicates undefined; keys compare after
//    unescaping, so "\u0069d" is "id"): -32600, id null (*);
//  - id neither string, number nor null: -32600, id null;
//  - jsonrpc not "2.0": -32600 with the id when it has a valid one;
//  - method present but not a string: -32600 with the id (null without);
//  - method without id: a notification, ignored;
//  - params present but neither object nor array: -32600 with the id;
//  - id with result or error and no method: a response (error wins when
//    both are present, as the session always did) (*);
//  - anything else: -32600 "neither a request nor a response", with the id.
// Throws nothing but std::bad_alloc.
Incoming decode(std::string_view text);

}  // namespace corral::core::jsonrpc
