// src/mcp/results.hpp: the CallToolResult each kind of call answers with:
// a code-mode run's value and console, a command's output view, a failure
// in the failure vocabulary's MCP form (docs/mcp.md), each cut to the result
// budget with a note saying what was cut.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.hpp"
#include "corral/bind.hpp"
#include "corral/pool.hpp"
#include "corral/process.hpp"
#include "mcp/result_store.hpp"

namespace corral::mcp {

namespace json = core::json;  // Boost.JSON with corral's writer

// The text content block {"type":"text","text":...}.
json::object text_block(std::string text);

// Keep: keeps the parts one result's cuts lost (whole) where the client can
// read them (MCP resources: ResultStore::keep, which keeps a result's parts
// together); for each, the content block that points at it, or nothing when
// it was not kept.
using Keep =
    std::function<std::vector<std::optional<json::object>>(std::vector<ResultStore::Text> parts)>;

// The CallToolResult of a call that `failure` ended without output to show:
// one text block {"code","message","retryable"}, "isError": true.
json::object failure_result(const Failure& failure);

// A code-mode run's answer: the value (structuredContent.value) and its
// console as text blocks, or the failure and the console it left. Each part
// the budget cut is handed whole to `keep` (when set) and its block added.
json::object execution_result(const pool::Outcome& outcome, std::size_t budget,
                              const Keep& keep = {});

// A command's answer: its output view (bind::output_view, cut inside stdout
// and stderr only so it keeps matching bind::output_schema()), or the
// failure and the view of the run it ended.
json::object command_result(const std::optional<Execution>& execution,
                            const std::optional<Failure>& failure, std::size_t budget,
                            const Keep& keep = {});

// What a busy call's answer adds: who holds the slots ("" when none does).
std::string held_slots(const bind::Binding& binding);

// An RFC 3339 UTC time (whole seconds) for a steady-clock instant, and the
// seconds since it.
std::string rfc3339(process::Clock::time_point at);
double seconds_since(process::Clock::time_point at);

// `text` parsed as JSON; null when it is not JSON.
json::value parse_or_null(std::string_view text);

}  // namespace corral::mcp
