// One failure vocabulary end to end: every FailureCode, as C++ (the exception
// family), the executor wire (the result envelope a client reads back, and
// the data.code of a JSON-RPC error), the MCP CallToolResult a client reads,
// and the metrics label an operator reads, each read back to the same code
// with the same retryable bit. Every form here is the one the layer itself
// writes, not a copy of its format.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "core/envelope.hpp"
#include "core/json.hpp"
#include "core/jsonrpc.hpp"
#include "mcp/service.hpp"
#include "server/metrics.hpp"

namespace corral {
namespace {

namespace json = core::json;

struct Read {
  std::optional<FailureCode> code;
  bool retryable = false;
};

// What a C++ caller catches.
Read through_exceptions(const Failure& failure) {
  try {
    throw_failure(failure);
  } catch (const Error& e) {
    const Failure back = e.to_failure();
    return {back.code, back.retryable()};
  }
  return {};
}

// What the executor client reads from an `execute` answer.
Read through_the_envelope(const Failure& failure) {
  const std::string wire = json::serialize(core::envelope(failure));
  const Outcome outcome = core::outcome_from_envelope(json::parse(wire));
  if (outcome.ok()) return {};
  // The wire carries the bit too, for clients that do not know the table.
  const bool wire_retryable = json::parse(wire).at("failure").at("retryable").as_bool();
  EXPECT_EQ(wire_retryable, outcome.failure().retryable()) << wire;
  return {outcome.failure().code, outcome.failure().retryable()};
}

// What a peer reads from a JSON-RPC error naming the code (data.code).
Read through_a_jsonrpc_error(const Failure& failure) {
  const std::string wire =
      core::jsonrpc::error_message(core::jsonrpc::Id(json::value("c1")),
                                   core::jsonrpc::kInvalidParams, failure.message, failure.code);
  const core::jsonrpc::Incoming in = core::jsonrpc::decode(wire);
  EXPECT_EQ(in.kind, core::jsonrpc::Incoming::Kind::response) << wire;
  if (!in.error) return {};
  const json::value& name = in.error->at("data").at("code");
  const auto code = failure_code_from_string(std::string(name.as_string()));
  return {code, code && is_retryable(*code)};
}

// What an MCP client reads from a tools/call that failed.
Read through_mcp(const Failure& failure) {
  const json::object result = mcp::failure_result(failure);
  EXPECT_TRUE(result.at("isError").as_bool());
  const json::value block =
      json::parse(std::string(result.at("content").as_array().at(0).at("text").as_string()));
  const auto code = failure_code_from_string(std::string(block.at("code").as_string()));
  return {code, block.at("retryable").as_bool()};
}

// What an operator reads from /metrics after one execution ended so.
Read through_the_metrics(const Failure& failure) {
  server::Metrics metrics(true);
  metrics.execution_finished(failure.code, 0.01);
  const std::string text = metrics.render(pool::Stats{});
  const std::regex counted(R"re(corral_executions_total\{outcome="([a-z_]+)"\} 1\n)re");
  std::smatch match;
  if (!std::regex_search(text, match, counted)) return {};
  const std::string label = match[1];
  // Exactly one outcome was counted.
  EXPECT_FALSE(std::regex_search(match.suffix().str(), counted)) << text;
  const auto code = failure_code_from_string(label);
  return {code, code && is_retryable(*code)};
}

TEST(FailureVocabulary, EveryCodeKeepsItsNameAndRetryabilityOnEveryPath) {
  for (int i = 0; i < kFailureCodeCount; ++i) {
    const auto code = static_cast<FailureCode>(i);
    const Failure failure{code, "it ended so", nullptr};
    const std::string name(to_string(code));
    SCOPED_TRACE(name);
    const std::pair<const char*, Read> paths[] = {
        {"exceptions", through_exceptions(failure)},
        {"envelope", through_the_envelope(failure)},
        {"jsonrpc error", through_a_jsonrpc_error(failure)},
        {"mcp result", through_mcp(failure)},
        {"metrics label", through_the_metrics(failure)},
    };
    for (const auto& [path, read] : paths) {
      EXPECT_EQ(read.code, code) << path;
      EXPECT_EQ(read.retryable, is_retryable(code)) << path;
    }
  }
}

// The success side of the metric has its own label, which is no failure.
TEST(FailureVocabulary, SuccessIsNoFailureName) {
  EXPECT_FALSE(failure_code_from_string("ok"));
  server::Metrics metrics(true);
  metrics.execution_finished(std::nullopt, 0.01);
  EXPECT_NE(metrics.render(pool::Stats{}).find("corral_executions_total{outcome=\"ok\"} 1\n"),
            std::string::npos);
}

}  // namespace
}  // namespace corral
