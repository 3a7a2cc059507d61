// Helpers for sandbox tests: run code and capture the failure, if any.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>

#include "corral/sandbox.hpp"

namespace corral::sandbox::testing {

// What a run ended in: the Execution plus the failure code, if it failed.
struct Ended {
  std::optional<FailureCode> code;
  std::string message;
  std::shared_ptr<const Execution> execution;

  bool ok() const { return !code.has_value(); }
  const std::string& value() const { return execution->value(); }
};

template <typename Run>
Ended ended(Run&& run) {
  try {
    return Ended{std::nullopt, "", std::make_shared<const Execution>(run())};
  } catch (const Error& e) {
    return Ended{e.code(), e.what(), e.execution()};
  }
}

inline Ended eval_in(Sandbox& sandbox, std::string_view code) {
  return ended([&] { return sandbox.eval(code); });
}

inline Ended execute_in(Sandbox& sandbox, std::string_view code) {
  return ended([&] { return sandbox.execute(code); });
}

inline Options quick(double timeout_seconds = 2.0) {
  Options options;
  options.timeout = std::chrono::milliseconds(std::llround(timeout_seconds * 1000));
  return options;
}

}  // namespace corral::sandbox::testing
