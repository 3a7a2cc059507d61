// tests/sandbox_ruby/ruby_sandbox.hpp: a Sandbox whose guests are Ruby.
#pragma once

#include "corral/sandbox.hpp"
#include "sandbox/ruby/engine_ruby.hpp"

namespace corral::sandbox::testing {

inline Options with_ruby(Options options) {
  options.language = Language::ruby;
  return options;
}

class RubySandbox : public Sandbox {
 public:
  explicit RubySandbox(Options options = {}) : Sandbox(with_ruby(options)) {}
};

}  // namespace corral::sandbox::testing
