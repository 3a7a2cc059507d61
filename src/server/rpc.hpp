// src/server/rpc.hpp: the executor protocol's own messages on top of
// core/jsonrpc.hpp: `execute`'s params and the bounds the server resolves for
// a run. No I/O; docs/protocol.md describes them.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/envelope.hpp"
#include "core/json.hpp"
#include "core/jsonrpc.hpp"
#include "corral/pool.hpp"
#include "corral/sandbox.hpp"
#include "corral/server.hpp"

namespace corral::server::rpc {

namespace json = core::json;  // Boost.JSON with corral's writer

// The message a tool.call gets when its execution already settled.
inline constexpr const char* kExecutionCompleted = "Execution has already completed.";
// The message a tool.call gets when the caller's socket closed under it.
inline constexpr const char* kCallerGone =
    "The connection to the caller closed before the tool answered.";

// The JSON-RPC pieces the executor protocol is made of (core/jsonrpc.hpp).
using core::jsonrpc::decode;
using core::jsonrpc::error_message;
using core::jsonrpc::Id;
using core::jsonrpc::Incoming;
using core::jsonrpc::kInternalError;
using core::jsonrpc::kInvalidParams;
using core::jsonrpc::kInvalidRequest;
using core::jsonrpc::kMethodNotFound;
using core::jsonrpc::kParseError;
using core::jsonrpc::request_message;
using core::jsonrpc::result_message;
using core::jsonrpc::result_message_text;

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

// The result envelope (core/envelope.hpp).
using core::envelope;
using core::envelope_text;
using core::outcome_from_envelope;

}  // namespace corral::server::rpc
