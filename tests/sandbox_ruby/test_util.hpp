// tests/sandbox_ruby/test_util.hpp: shared helpers of the Ruby guest tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "sandbox_ruby/ruby_sandbox.hpp"

namespace corral::sandbox::testing {

inline Options ruby_options() {
  Options options;
  options.timeout = std::chrono::seconds(10);
  return options;
}

// Runs `fn`, expects it to throw a corral::Error with `code`; returns its
// message and Execution.
struct Caught {
  std::string message;
  std::shared_ptr<const Execution> execution;
};

template <typename Fn>
Caught expect_failure(FailureCode code, Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(to_string(e.code()), to_string(code)) << e.what();
    return Caught{e.what(), e.execution()};
  }
  ADD_FAILURE() << "expected failure " << to_string(code);
  return Caught{};
}

inline bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

}  // namespace corral::sandbox::testing
