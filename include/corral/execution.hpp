// corral/execution.hpp: the frozen result of one run.
//
// Every run, whichever way it was made (sandbox, pool, bound command), ends in
// one `Execution`: returned on success, carried by the exception on failure.
// It is immutable once built and safe to share between threads.
//
// Example:
//   corral::Execution e = sandbox.eval("console.log('hi'); 6 * 7");
//   e.value();          // "42" (JSON text)
//   e.stdout_text();    // "hi\n"
//   e.usage().wall_time;
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace corral {

// Usage: what one run consumed. Populated on every outcome.
struct Usage {
  // Wall-clock seconds from run entry to its end, including time spent in tools.
  double wall_time = 0;
  // CPU seconds the run's own thread or process used.
  double cpu_time = 0;
  // High-water bytes the run allocated past its entry baseline, as measured
  // (never clamped): a JavaScript run that failed memory_limit may show more
  // than its limit, by what one step of its growth took (docs/sandbox.md).
  std::uint64_t memory_peak = 0;
  // Tool calls the guest made (including refused ones).
  std::uint64_t tool_calls = 0;
  // Bytes the guest or command wrote to stdout and stderr, kept or not.
  std::uint64_t output_bytes = 0;

  friend bool operator==(const Usage&, const Usage&) = default;
};

// ExecutionData: the fields of an Execution while it is being built.
struct ExecutionData {
  // JSON text, one complete document; "null" on a failed run. It is carried
  // as text (spliced into envelopes as it is), so it must be JSON.
  std::string value = "null";
  std::string stdout_text;
  std::string stderr_text;
  bool stdout_truncated = false;
  bool stderr_truncated = false;
  bool stdout_replaced = false;
  bool stderr_replaced = false;
  std::optional<int> exit_code;  // bound commands only
  bool failed = false;
  Usage usage;
};

// Execution: a frozen value object. Build it from ExecutionData; it never
// changes afterwards.
class Execution {
 public:
  Execution() = default;
  explicit Execution(ExecutionData data) : data_(std::move(data)) {}

  // The run's result as JSON text ("null" when failed or when there was none).
  const std::string& value() const noexcept { return data_.value; }
  const std::string& stdout_text() const noexcept { return data_.stdout_text; }
  const std::string& stderr_text() const noexcept { return data_.stderr_text; }
  // True iff that channel hit its cap during the run.
  bool stdout_truncated() const noexcept { return data_.stdout_truncated; }
  bool stderr_truncated() const noexcept { return data_.stderr_truncated; }
  // True iff that channel held bytes that are not UTF-8, each ill-formed
  // sequence of which now reads U+FFFD: the text is always valid UTF-8, and
  // a cut by the output cap falls between characters.
  bool stdout_replaced() const noexcept { return data_.stdout_replaced; }
  bool stderr_replaced() const noexcept { return data_.stderr_replaced; }
  // The exit status of a bound command; empty for sandbox runs and for
  // commands that were killed before they exited.
  const std::optional<int>& exit_code() const noexcept { return data_.exit_code; }
  // True iff the run failed. A run whose value is null can still succeed.
  bool failed() const noexcept { return data_.failed; }
  const Usage& usage() const noexcept { return data_.usage; }

  const ExecutionData& data() const noexcept { return data_; }

 private:
  ExecutionData data_;
};

// The Execution as one JSON object (the wire and `--json` form):
// {"value":..,"stdout":..,"stderr":..,"stdout_truncated":..,"stderr_truncated":..,
//  "stdout_replaced":true?,"stderr_replaced":true?,"exit_code":..?,"failed":..,
//  "usage":{"wall_time":..,"cpu_time":..,"memory_peak":..,"tool_calls":..,
//  "output_bytes":..}}
// (`*_replaced` appear only when true.)
std::string to_json(const Execution& execution);

}  // namespace corral
