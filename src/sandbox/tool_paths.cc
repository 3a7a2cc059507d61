// The tool path rules of each guest language.
#include "sandbox/tool_paths.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include "corral/sandbox.hpp"
#include "sandbox/identifier.hpp"

namespace corral::sandbox {
namespace {

// Globals of every context: a tool may not shadow them.
constexpr std::array<std::string_view, 58> kReservedGlobals = {"globalThis",
                                                               "console",
                                                               "Object",
                                                               "Function",
                                                               "Array",
                                                               "Number",
                                                               "parseFloat",
                                                               "parseInt",
                                                               "Infinity",
                                                               "NaN",
                                                               "undefined",
                                                               "Boolean",
                                                               "String",
                                                               "Symbol",
                                                               "Date",
                                                               "Promise",
                                                               "RegExp",
                                                               "Error",
                                                               "AggregateError",
                                                               "EvalError",
                                                               "RangeError",
                                                               "ReferenceError",
                                                               "SyntaxError",
                                                               "TypeError",
                                                               "URIError",
                                                               "JSON",
                                                               "Math",
                                                               "Intl",
                                                               "ArrayBuffer",
                                                               "Uint8Array",
                                                               "Int8Array",
                                                               "Uint16Array",
                                                               "Int16Array",
                                                               "Uint32Array",
                                                               "Int32Array",
                                                               "Float32Array",
                                                               "Float64Array",
                                                               "Uint8ClampedArray",
                                                               "BigUint64Array",
                                                               "BigInt64Array",
                                                               "DataView",
                                                               "Map",
                                                               "BigInt",
                                                               "Set",
                                                               "WeakMap",
                                                               "WeakSet",
                                                               "Proxy",
                                                               "Reflect",
                                                               "FinalizationRegistry",
                                                               "WeakRef",
                                                               "decodeURI",
                                                               "decodeURIComponent",
                                                               "encodeURI",
                                                               "encodeURIComponent",
                                                               "escape",
                                                               "unescape",
                                                               "eval",
                                                               "isFinite"};

}  // namespace

bool paths_overlap(std::string_view a, std::string_view b) {
  if (a == b) return true;
  const auto& shorter = a.size() < b.size() ? a : b;
  const auto& longer = a.size() < b.size() ? b : a;
  return longer.substr(0, shorter.size()) == shorter && longer[shorter.size()] == '.';
}

void check_javascript_tool_path(std::string_view path, const std::vector<std::string>& bound) {
  // Appended, not concatenated: GCC 12 at -O3 warns (-Wrestrict) on a
  // literal + string + literal chain here.
  std::string quoted(1, '"');
  quoted.append(path).push_back('"');
  std::string_view rest = path;
  bool first = true;
  while (true) {
    const std::size_t dot = rest.find('.');
    const std::string_view segment = rest.substr(0, dot);
    if (!is_identifier(segment))
      throw std::invalid_argument("bind: " + quoted +
                                  " is not a dotted path of JavaScript identifiers");
    if (first && std::find(kReservedGlobals.begin(), kReservedGlobals.end(), segment) !=
                     kReservedGlobals.end())
      throw std::invalid_argument("bind: " + quoted + " would shadow the JavaScript global " +
                                  std::string(segment));
    first = false;
    if (dot == std::string_view::npos) break;
    rest.remove_prefix(dot + 1);
  }
  for (const std::string& other : bound) {
    if (paths_overlap(other, path))
      throw std::invalid_argument("bind: " + quoted + " collides with the bound path \"" + other +
                                  "\"");
  }
}

void check_tool_path(Language language, std::string_view path,
                     const std::vector<std::string>& bound) {
  if (language == Language::ruby) return check_ruby_tool_path(path, bound);
  check_javascript_tool_path(path, bound);
}

}  // namespace corral::sandbox
