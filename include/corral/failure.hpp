// corral/failure.hpp: the one failure vocabulary.
//
// Every run corral makes, in-process, pooled or as a bound command, ends in an
// `Execution` or in a failure carrying one `FailureCode`. The same codes are
// used by the C++ API (as exceptions), the wire protocol, MCP results and
// metrics labels. Codes are grouped by what the caller should do about them:
//
//   - nothing ran, fix the request:  invalid_request, compile_error,
//     protocol_mismatch, setup_error
//   - the guest or command failed:   guest_error, unserializable_value,
//     command_failed, tool_error, no_such_tool, tool_argument
//   - a bound stopped it:            timeout (the deadline passed),
//     cancelled (someone asked it to stop), memory_limit (it allocated past
//     its budget), response_too_large (its result did not fit the response)
//   - try again later:               busy (every slot taken, nothing queued),
//     queue_overflow (the wait queue is full), connection_broken (the worker
//     or peer died mid-run)
//   - could not start:               unavailable (retrying soon won't help
//     until the operator acts), connection_rejected (not authorised)
//   - cleanup_failed: the run ended but the containment unit still holds a
//     live process; the slot stays taken until it is seen empty.
//   - internal: a broken invariant on the host; details are in the log.
//
// Example:
//   try {
//     sandbox.eval("while (true) {}");
//   } catch (const corral::TimeoutError& e) {
//     e.code();             // corral::FailureCode::timeout
//     e.execution()->usage().wall_time;
//   }
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "corral/execution.hpp"

namespace corral {

// FailureCode: enumerators are spelt exactly as on the wire.
enum class FailureCode {
  invalid_request,
  compile_error,
  guest_error,
  timeout,
  cancelled,
  memory_limit,
  tool_error,
  no_such_tool,
  tool_argument,
  unserializable_value,
  command_failed,
  cleanup_failed,
  busy,
  queue_overflow,
  unavailable,
  connection_broken,
  connection_rejected,
  protocol_mismatch,
  response_too_large,
  setup_error,
  internal,
};

inline constexpr int kFailureCodeCount = static_cast<int>(FailureCode::internal) + 1;

// The wire string of `code`, also its metrics label ("queue_overflow").
std::string_view to_string(FailureCode code) noexcept;

// Parses a wire string; nullopt for anything not in the vocabulary.
std::optional<FailureCode> failure_code_from_string(std::string_view wire) noexcept;

// True iff the same request, unchanged, can succeed elsewhere or later:
// busy, queue_overflow, unavailable, connection_broken (src/core/failure.cc
// says how each layer keeps to it).
bool is_retryable(FailureCode code) noexcept;

// Failure: the value form of a failed run, for IPC, the wire and MCP.
// `execution` holds what the run produced before it failed; it is empty when
// the failure happened before anything ran.
struct Failure {
  FailureCode code = FailureCode::internal;
  std::string message;
  std::shared_ptr<const Execution> execution;

  bool retryable() const noexcept { return is_retryable(code); }
};

// Error: base of every exception a corral run ends in.
//
// Carries the failure code and the run's frozen Execution (null when nothing
// ran). Catch the family you can act on; `code()` is always exact.
class Error : public std::runtime_error {
 public:
  Error(FailureCode code, const std::string& message,
        std::shared_ptr<const Execution> execution = nullptr);
  ~Error() override;

  FailureCode code() const noexcept { return code_; }
  bool retryable() const noexcept { return is_retryable(code_); }
  // The run's observables (output, usage) before it failed; null if nothing ran.
  const std::shared_ptr<const Execution>& execution() const noexcept { return execution_; }
  Failure to_failure() const { return Failure{code_, what(), execution_}; }

 private:
  FailureCode code_;
  std::shared_ptr<const Execution> execution_;
};

// TrapError: a bound stopped the run (timeout, memory_limit, cancelled). The
// sandbox that ran it is still usable, but a Pool discards it anyway.
class TrapError : public Error {
 public:
  using Error::Error;
  ~TrapError() override;
};
class TimeoutError : public TrapError {
 public:
  TimeoutError(const std::string& message, std::shared_ptr<const Execution> execution)
      : TrapError(FailureCode::timeout, message, std::move(execution)) {}
  ~TimeoutError() override;
};
class MemoryLimitError : public TrapError {
 public:
  MemoryLimitError(const std::string& message, std::shared_ptr<const Execution> execution)
      : TrapError(FailureCode::memory_limit, message, std::move(execution)) {}
  ~MemoryLimitError() override;
};

// SandboxError: the guest ran and failed on its own terms (compile_error,
// guest_error, unserializable_value) or the request named something absent.
class SandboxError : public Error {
 public:
  using Error::Error;
  ~SandboxError() override;
};

// ServiceError: a tool call failed and the guest did not catch it
// (tool_error, no_such_tool, tool_argument).
class ServiceError : public Error {
 public:
  using Error::Error;
  ~ServiceError() override;
};

// SetupError: the engine or unit could not be set up (setup_error,
// unavailable). Retrying with the same configuration gives the same result.
class SetupError : public Error {
 public:
  using Error::Error;
  ~SetupError() override;
};

// CommandError: a bound command ended badly (command_failed, cleanup_failed).
class CommandError : public Error {
 public:
  using Error::Error;
  ~CommandError() override;
};

// CapacityError: no room now (busy, queue_overflow); retry later.
class CapacityError : public Error {
 public:
  using Error::Error;
  ~CapacityError() override;
};

// The destructors are defined out of line so every exception class has one
// home for its vtable and type_info (code built without RTTI throws them).

// Throws the exception class that matches `code`.
[[noreturn]] void throw_failure(FailureCode code, const std::string& message,
                                std::shared_ptr<const Execution> execution = nullptr);
[[noreturn]] inline void throw_failure(const Failure& failure) {
  throw_failure(failure.code, failure.message, failure.execution);
}

}  // namespace corral
