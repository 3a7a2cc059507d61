#include "corral/failure.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/json.hpp"
#include "corral/outcome.hpp"

namespace corral {
namespace {

// Every code round-trips through C++, the wire string and back, the wire
// string is unique, and throw_failure picks a class whose code() matches.
TEST(FailureCode, EveryCodeRoundTripsThroughWireAndException) {
  std::set<std::string_view> seen;
  for (int i = 0; i < kFailureCodeCount; ++i) {
    const auto code = static_cast<FailureCode>(i);
    const std::string_view wire = to_string(code);
    EXPECT_TRUE(seen.insert(wire).second) << wire;
    EXPECT_EQ(failure_code_from_string(wire), code) << wire;
    for (char c : wire) EXPECT_TRUE((c >= 'a' && c <= 'z') || c == '_') << wire;
    try {
      throw_failure(code, "message");
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code);
      EXPECT_STREQ(e.what(), "message");
      EXPECT_EQ(e.execution(), nullptr);
    }
  }
  EXPECT_EQ(seen.size(), 21u);
  EXPECT_FALSE(failure_code_from_string("Timeout"));
  EXPECT_FALSE(failure_code_from_string(""));
}

// Retryable iff the same request, unchanged, can succeed elsewhere or later.
TEST(FailureCode, RetryableIffTheSameRequestCanSucceedElsewhereOrLater) {
  const std::map<FailureCode, bool> table = {
      {FailureCode::invalid_request, false},       // the request is wrong
      {FailureCode::compile_error, false},         // its code is wrong
      {FailureCode::guest_error, false},           // its code throws
      {FailureCode::timeout, false},               // its code takes longer than its bound
      {FailureCode::cancelled, false},             // its caller stopped it
      {FailureCode::memory_limit, false},          // its code needs more than its bound
      {FailureCode::tool_error, false},            // a tool refused it
      {FailureCode::no_such_tool, false},          // it names a tool that is not there
      {FailureCode::tool_argument, false},         // it passes a tool what it cannot take
      {FailureCode::unserializable_value, false},  // its value has no JSON form
      {FailureCode::command_failed, false},        // the command exits non-zero
      {FailureCode::cleanup_failed, false},        // its processes could not all be ended
      {FailureCode::busy, true},                   // every slot taken now
      {FailureCode::queue_overflow, true},         // every slot and the queue taken now
      {FailureCode::unavailable, true},            // this replica is not serving now
      {FailureCode::connection_broken, true},      // the transport broke under it
      {FailureCode::connection_rejected, false},   // refused (its token, its origin)
      {FailureCode::protocol_mismatch, false},     // the peer speaks another version
      {FailureCode::response_too_large, false},    // its answer is larger than allowed
      {FailureCode::setup_error, false},           // this configuration cannot run it
      {FailureCode::internal, false},              // it broke corral (a worker it crashed)
  };
  ASSERT_EQ(table.size(), static_cast<std::size_t>(kFailureCodeCount));
  for (const auto& [code, expected] : table) {
    EXPECT_EQ(is_retryable(code), expected) << to_string(code);
    EXPECT_EQ((Failure{code, "m", nullptr}.retryable()), expected) << to_string(code);
  }
}

TEST(FailureCode, ExceptionFamiliesMirrorKobako) {
  EXPECT_THROW(throw_failure(FailureCode::timeout, "t"), TimeoutError);
  EXPECT_THROW(throw_failure(FailureCode::memory_limit, "m"), MemoryLimitError);
  EXPECT_THROW(throw_failure(FailureCode::timeout, "t"), TrapError);
  EXPECT_THROW(throw_failure(FailureCode::guest_error, "g"), SandboxError);
  EXPECT_THROW(throw_failure(FailureCode::compile_error, "c"), SandboxError);
  EXPECT_THROW(throw_failure(FailureCode::tool_error, "t"), ServiceError);
  EXPECT_THROW(throw_failure(FailureCode::no_such_tool, "t"), ServiceError);
  EXPECT_THROW(throw_failure(FailureCode::setup_error, "s"), SetupError);
  EXPECT_THROW(throw_failure(FailureCode::command_failed, "c"), CommandError);
  EXPECT_THROW(throw_failure(FailureCode::busy, "b"), CapacityError);
}

TEST(Execution, JsonFormRoundTrips) {
  ExecutionData data;
  data.value = R"({"a":[1,2.5,"x"]})";
  data.stdout_text = "out\n";
  data.stderr_text = "err\n";
  data.stdout_truncated = true;
  data.exit_code = 3;
  data.failed = true;
  data.usage = Usage{1.5, 0.25, 4096, 7, 12};
  const Execution original(data);
  const auto object = core::parse_json(to_json(original), "execution").as_object();
  const Execution copy = core::execution_from_object(object);
  EXPECT_EQ(copy.value(), R"({"a":[1,2.5,"x"]})");
  EXPECT_EQ(copy.stdout_text(), "out\n");
  EXPECT_EQ(copy.stderr_text(), "err\n");
  EXPECT_TRUE(copy.stdout_truncated());
  EXPECT_FALSE(copy.stderr_truncated());
  EXPECT_EQ(copy.exit_code(), 3);
  EXPECT_TRUE(copy.failed());
  EXPECT_EQ(copy.usage(), original.usage());
}

TEST(Failure, JsonFormCarriesCodeRetryableAndExecution) {
  Failure failure{FailureCode::busy, "every slot is taken",
                  std::make_shared<const Execution>(ExecutionData{})};
  const auto object = core::failure_to_object(failure);
  EXPECT_EQ(object.at("code").as_string(), "busy");
  EXPECT_EQ(object.at("retryable").as_bool(), true);
  const Failure back = core::failure_from_object(object);
  EXPECT_EQ(back.code, FailureCode::busy);
  EXPECT_EQ(back.message, "every slot is taken");
  ASSERT_NE(back.execution, nullptr);
  EXPECT_THROW(core::failure_from_object(core::json::object{{"code", "nope"}}),
               std::invalid_argument);
}

}  // namespace
}  // namespace corral

namespace corral {
namespace {

// Outcome holds exactly one side: asking for the other is an error, not an
// empty value, and value_or_throw throws the failure's own family.
TEST(Outcome, HoldsExactlyOneSide) {
  ExecutionData data;
  data.value = "3";
  const Outcome ok{Execution(data)};
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.execution().value(), "3");
  EXPECT_EQ(ok.value_or_throw().value(), "3");
  EXPECT_THROW((void)ok.failure(), std::bad_variant_access);

  const Outcome failed{Failure{FailureCode::timeout, "too slow", nullptr}};
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(failed.failure().code, FailureCode::timeout);
  EXPECT_THROW((void)failed.execution(), std::bad_variant_access);
  try {
    (void)failed.value_or_throw();
    FAIL() << "value_or_throw returned for a failure";
  } catch (const TimeoutError& e) {
    EXPECT_EQ(e.code(), FailureCode::timeout);
    EXPECT_STREQ(e.what(), "too slow");
  }
  for (int code = 0; code < kFailureCodeCount; ++code) {
    const Outcome o{Failure{static_cast<FailureCode>(code), "m", nullptr}};
    try {
      (void)o.value_or_throw();
      ADD_FAILURE() << "no throw for " << to_string(static_cast<FailureCode>(code));
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), static_cast<FailureCode>(code));
    }
  }
}

}  // namespace
}  // namespace corral
