#include "corral/failure.hpp"

#include <array>

namespace corral {
namespace {

constexpr std::array<std::string_view, kFailureCodeCount> kWireNames = {
    "invalid_request",
    "compile_error",
    "guest_error",
    "timeout",
    "cancelled",
    "memory_limit",
    "tool_error",
    "no_such_tool",
    "tool_argument",
    "unserializable_value",
    "command_failed",
    "cleanup_failed",
    "busy",
    "queue_overflow",
    "unavailable",
    "connection_broken",
    "connection_rejected",
    "protocol_mismatch",
    "response_too_large",
    "setup_error",
    "internal",
};

}  // namespace

std::string_view to_string(FailureCode code) noexcept {
  const auto index = static_cast<std::size_t>(code);
  return index < kWireNames.size() ? kWireNames[index] : std::string_view("internal");
}

std::optional<FailureCode> failure_code_from_string(std::string_view wire) noexcept {
  for (std::size_t i = 0; i < kWireNames.size(); ++i) {
    if (kWireNames[i] == wire) return static_cast<FailureCode>(i);
  }
  return std::nullopt;
}

// The one rule: a failure is retryable iff the same request, unchanged, can
// succeed elsewhere or later. Capacity (busy, queue_overflow), a replica
// that is not serving (unavailable: draining, no worker could start, no
// containment here) and a transport that broke under a run that did not
// break it (connection_broken) pass; everything the request itself decides
// (its code, its bounds, its arguments) does not. The layers pick the code
// so that this holds: a worker the run itself crashed is `internal`, a
// result too large for the frame is `response_too_large`.
bool is_retryable(FailureCode code) noexcept {
  return code == FailureCode::busy || code == FailureCode::queue_overflow ||
         code == FailureCode::unavailable || code == FailureCode::connection_broken;
}

Error::Error(FailureCode code, const std::string& message,
             std::shared_ptr<const Execution> execution)
    : std::runtime_error(message), code_(code), execution_(std::move(execution)) {}

Error::~Error() = default;
TrapError::~TrapError() = default;
TimeoutError::~TimeoutError() = default;
MemoryLimitError::~MemoryLimitError() = default;
SandboxError::~SandboxError() = default;
ServiceError::~ServiceError() = default;
SetupError::~SetupError() = default;
CommandError::~CommandError() = default;
CapacityError::~CapacityError() = default;

void throw_failure(FailureCode code, const std::string& message,
                   std::shared_ptr<const Execution> execution) {
  switch (code) {
    case FailureCode::timeout:
      throw TimeoutError(message, std::move(execution));
    case FailureCode::memory_limit:
      throw MemoryLimitError(message, std::move(execution));
    case FailureCode::cancelled:
      throw TrapError(code, message, std::move(execution));
    case FailureCode::invalid_request:
    case FailureCode::compile_error:
    case FailureCode::guest_error:
    case FailureCode::unserializable_value:
      throw SandboxError(code, message, std::move(execution));
    case FailureCode::tool_error:
    case FailureCode::no_such_tool:
    case FailureCode::tool_argument:
      throw ServiceError(code, message, std::move(execution));
    case FailureCode::setup_error:
    case FailureCode::unavailable:
      throw SetupError(code, message, std::move(execution));
    case FailureCode::command_failed:
    case FailureCode::cleanup_failed:
      throw CommandError(code, message, std::move(execution));
    case FailureCode::busy:
    case FailureCode::queue_overflow:
      throw CapacityError(code, message, std::move(execution));
    case FailureCode::connection_broken:
    case FailureCode::connection_rejected:
    case FailureCode::protocol_mismatch:
    case FailureCode::response_too_large:
    case FailureCode::internal:
      break;
  }
  throw Error(code, message, std::move(execution));
}

}  // namespace corral
