// src/sandbox/tool_paths.hpp: the names a guest can call a bound tool by,
// per language. `check_tool_path` (corral/sandbox.hpp) picks the rule of
// the sandbox's language; Sandbox::bind and the MCP catalogue both ask it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace corral::sandbox {

// True when `a` equals `b` or one is an ancestor of the other on a '.'.
bool paths_overlap(std::string_view a, std::string_view b);

// JavaScript: a dotted path of identifiers whose first segment is not one of
// every context's globals and that neither equals, contains nor is contained
// by a path in `bound`. Throws std::invalid_argument naming the problem.
void check_javascript_tool_path(std::string_view path, const std::vector<std::string>& bound);

// Ruby: engine_ruby.hpp (constants and a method).
void check_ruby_tool_path(std::string_view path, const std::vector<std::string>& bound);

}  // namespace corral::sandbox
