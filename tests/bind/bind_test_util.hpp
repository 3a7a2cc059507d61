// tests/bind/bind_test_util.hpp: trees and helpers for binding tests.
#pragma once

#include <string>
#include <vector>

#include "corral/bind.hpp"

namespace corral::bind::testing {

// The argv printer script (prints each argument on its own line).
inline std::string printer() { return CORRAL_TEST_ARGV_PRINTER; }

inline FlagSpec flag(std::string name, std::string type, bool required = false) {
  FlagSpec f;
  f.name = std::move(name);
  f.type = std::move(type);
  f.required = required;
  return f;
}

inline CommandSpec command(std::string name, std::vector<CommandSpec> children = {}) {
  CommandSpec c;
  c.name = std::move(name);
  c.runnable = children.empty();
  c.commands = std::move(children);
  return c;
}

inline CommandTree tree(CommandSpec root) {
  CommandTree t;
  t.executable = printer();
  t.root = std::move(root);
  return t;
}

inline std::vector<std::string> names(const Binding& binding) {
  std::vector<std::string> out;
  for (const auto& op : binding.operations()) out.push_back(op.name);
  return out;
}

// The lines of `text`.
inline std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace corral::bind::testing
