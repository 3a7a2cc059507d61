// src/sandbox/options.cc: what sandbox::Options' values may be, apart from
// the Sandbox that runs them. The pool's frames parse and check a run's
// limits with these in the daemon, which links no engine: nothing here may
// reach one (Layers.corral_cli_NeedsNoLibnode).
#include <stdexcept>
#include <string>

#include "core/units.hpp"
#include "corral/sandbox.hpp"

namespace corral::sandbox {
namespace {

// The engines add these to their clocks: core::check_bound keeps that
// arithmetic far from overflow (std::nullopt is "none").
void check_duration(const std::optional<std::chrono::milliseconds>& value, const char* name) {
  if (value) core::check_bound(*value, name);
}

void check_cap(const std::optional<std::uint64_t>& cap, const char* name) {
  if (cap && *cap == 0) {
    throw std::invalid_argument(std::string(name) + " must be greater than zero (or none)");
  }
}

}  // namespace

Profile parse_profile(std::string_view text) {
  if (text == "hermetic") return Profile::hermetic;
  if (text == "permissive") return Profile::permissive;
  throw std::invalid_argument("profile must be hermetic or permissive, not \"" + std::string(text) +
                              "\"");
}

std::string_view to_string(Profile profile) noexcept {
  return profile == Profile::permissive ? "permissive" : "hermetic";
}

void validate(const Options& options) {
  check_duration(options.timeout, "timeout");
  check_duration(options.queue_timeout, "queue_timeout");
  check_cap(options.memory_limit, "memory_limit");
  check_cap(options.stdout_limit, "stdout_limit");
  check_cap(options.stderr_limit, "stderr_limit");
  check_cap(options.max_tool_calls, "max_tool_calls");
  if (options.profile != Profile::hermetic && options.profile != Profile::permissive) {
    throw std::invalid_argument("profile must be hermetic or permissive");
  }
  if (options.language != Language::javascript && options.language != Language::ruby &&
      options.language != Language::typescript) {
    throw std::invalid_argument("language must be javascript, typescript or ruby");
  }
}

}  // namespace corral::sandbox
