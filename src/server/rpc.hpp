// src/server/rpc.hpp: the executor protocol's messages (JSON-RPC 2.0) and the
// bounds the server resolves for a run. No I/O: the sessions and the client
// both build and read their messages here, and docs/protocol.md describes
// what these functions write.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.hpp"
#include "corral/pool.hpp"
#include "corral/sandbox.hpp"
#include "corral/server.hpp"

namespace corral::server::rpc {

namespace json = core::json;  // Boost.JSON with corral's writer

// JSON-RPC 2.0 error codes the server answers with (never a run's failure:
// those travel inside the result envelope).
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;

// The message a tool.call gets when its execution already settled.
inline constexpr const char* kExecutionCompleted = "Execution has already completed.";
// The message a tool.call gets when the caller's socket closed under it.
inline constexpr const char* kCallerGone =
    "The connection to the caller closed before the tool answered.";

// {"jsonrpc":"2.0","id":id,"result":result}
std::string result_message(const json::value& id, json::value result);
// {"jsonrpc":"2.0","id":id,"error":{"code":code,"message":..,"data":{"code":failure}}}
std::string error_message(const json::value& id, int code, std::string_view message,
                          FailureCode failure = FailureCode::invalid_request);
// {"jsonrpc":"2.0","id":id,"method":method,"params":params} (no params when null)
std::string request_message(const json::value& id, std::string_view method, json::value params);

// TimeoutAsk: what a request said about its timeout.
struct TimeoutAsk {
  enum class Kind { absent, widest, millis };
  Kind kind = Kind::absent;
  double millis = 0;
};

// ExecuteParams: a validated `execute` request.
struct ExecuteParams {
  std::string code;
  std::vector<std::string> tools;
  TimeoutAsk timeout;
  sandbox::Language language = sandbox::Language::javascript;
};

// Validates the params of `execute`; throws std::invalid_argument with a
// message naming the bad field (the caller answers invalid_request).
ExecuteParams parse_execute(const json::value* params);

// The timeout a run gets: the ask clamped under min(max_timeout,
// kMaxSupportedTimeout); absent means default_timeout (also clamped), widest
// means the ceiling.
std::chrono::milliseconds resolve_timeout(const TimeoutAsk& ask, const Options& options);

// "Execution timed out at its 200 ms bound."
std::string timeout_message(std::chrono::milliseconds bound);

// The result envelope: {"ok":true,"execution":{..}} or
// {"ok":false,"failure":{"code":..,"message":..,"retryable":..,"execution"?:..}}.
json::object envelope(const pool::Outcome& outcome);
json::object failure_envelope(const Failure& failure);

// Reads an envelope back (the client's side). Throws std::invalid_argument
// when `value` is not one.
pool::Outcome outcome_from_envelope(const json::value& value);

}  // namespace corral::server::rpc
