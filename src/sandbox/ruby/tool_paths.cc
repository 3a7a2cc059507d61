// Ruby's rule for bound tool paths (engine_ruby.hpp, tool_paths.hpp):
// `ruby_tool_path` spells a path as Ruby constants and a method, and
// `check_ruby_tool_path` refuses one that would reopen a constant Ruby or
// corral defines, or that collides with a path bound already.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sandbox/ruby/engine_ruby.hpp"
#include "sandbox/tool_paths.hpp"

namespace corral::sandbox {
namespace {

bool is_ascii_identifier(std::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

}  // namespace

std::string ruby_tool_path(std::string_view path) {
  std::vector<std::string> segments;
  std::string_view rest = path;
  while (true) {
    const std::size_t dot = rest.find('.');
    const std::size_t colons = rest.find("::");
    const std::size_t cut = std::min(dot, colons);
    segments.emplace_back(rest.substr(0, cut));
    if (cut == std::string_view::npos) break;
    // "::" may only separate constants: not after the method's dot.
    rest.remove_prefix(cut + (cut == colons ? 2 : 1));
  }
  if (segments.size() < 2) {
    throw std::invalid_argument("bind: \"" + std::string(path) +
                                "\" is not a Ruby tool path (Const.method or Const::Const.method)");
  }
  std::string ruby;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    std::string& segment = segments[i];
    if (!is_ascii_identifier(segment)) {
      throw std::invalid_argument("bind: \"" + std::string(path) + "\" has a segment \"" + segment +
                                  "\" that is not an ASCII identifier");
    }
    if (i + 1 < segments.size()) {
      if (segment[0] == '_') {
        throw std::invalid_argument("bind: \"" + std::string(path) + "\": \"" + segment +
                                    "\" cannot be a Ruby constant");
      }
      if (segment[0] >= 'a' && segment[0] <= 'z') segment[0] = static_cast<char>(segment[0] - 32);
      ruby += (i == 0 ? "" : "::") + segment;
    } else {
      ruby += "." + segment;
    }
  }
  return ruby;
}

namespace {

// Top-level constants of a guest's state before any tool is bound.
constexpr std::string_view kRubyConstants[] = {"ArgumentError",
                                               "Array",
                                               "BasicObject",
                                               "Class",
                                               "Comparable",
                                               "Complex",
                                               "Corral",
                                               "Data",
                                               "Dir",
                                               "Enumerable",
                                               "Enumerator",
                                               "ENV",
                                               "Exception",
                                               "FalseClass",
                                               "Fiber",
                                               "FiberError",
                                               "File",
                                               "Float",
                                               "FloatDomainError",
                                               "FrozenError",
                                               "GC",
                                               "Hash",
                                               "IndexError",
                                               "Integer",
                                               "IO",
                                               "KeyError",
                                               "Kernel",
                                               "LocalJumpError",
                                               "Math",
                                               "Method",
                                               "Module",
                                               "NameError",
                                               "NilClass",
                                               "NoMemoryError",
                                               "NoMethodError",
                                               "NotImplementedError",
                                               "Numeric",
                                               "Object",
                                               "ObjectSpace",
                                               "Proc",
                                               "Process",
                                               "Random",
                                               "Range",
                                               "RangeError",
                                               "Rational",
                                               "RegexpError",
                                               "RuntimeError",
                                               "ScriptError",
                                               "SecurityError",
                                               "Socket",
                                               "StandardError",
                                               "StopIteration",
                                               "String",
                                               "Struct",
                                               "Symbol",
                                               "SyntaxError",
                                               "SystemStackError",
                                               "Time",
                                               "TrueClass",
                                               "TypeError",
                                               "UnboundMethod",
                                               "ZeroDivisionError",
                                               "STDOUT",
                                               "STDERR",
                                               "RUBY_VERSION",
                                               "RUBY_ENGINE",
                                               "MRUBY_VERSION"};

// "Tools::Search.query" -> "Tools.Search.query", for overlap checks.
std::string dotted(const std::string& ruby) {
  std::string out;
  for (std::size_t i = 0; i < ruby.size(); ++i) {
    if (ruby.compare(i, 2, "::") == 0) {
      out.push_back('.');
      ++i;
    } else {
      out.push_back(ruby[i]);
    }
  }
  return out;
}

}  // namespace

void check_ruby_tool_path(std::string_view path, const std::vector<std::string>& bound) {
  const std::string ruby = dotted(ruby_tool_path(path));
  const std::string_view first = std::string_view(ruby).substr(0, ruby.find('.'));
  for (std::string_view reserved : kRubyConstants) {
    if (first == reserved) {
      throw std::invalid_argument("bind: \"" + std::string(path) +
                                  "\" would reopen the Ruby constant " + std::string(reserved));
    }
  }
  for (const std::string& other_path : bound) {
    std::string other;
    try {
      other = dotted(ruby_tool_path(other_path));
    } catch (const std::invalid_argument&) {
      continue;
    }
    if (paths_overlap(other, ruby)) {
      throw std::invalid_argument("bind: \"" + std::string(path) +
                                  "\" collides with the bound path \"" + other_path + "\"");
    }
  }
}

}  // namespace corral::sandbox
