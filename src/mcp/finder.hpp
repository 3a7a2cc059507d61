// src/mcp/finder.hpp: code mode's own `codemode.search(query)` and
// `codemode.describe(name)`, which compact mode binds instead of putting
// every declaration into the `execute` description: a guest finds the
// functions it needs and reads their declarations on demand.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "mcp/typescript.hpp"

namespace corral::mcp {

// The paths below `codemode` the finder's two functions take.
inline constexpr std::string_view kSearchPath = "search";
inline constexpr std::string_view kDescribePath = "describe";

// The finder's own member of `codemode` at `path` (kSearchPath or
// kDescribePath) as a TypeScript member declaration with its doc comment,
// two-space indented lines ending in newlines; empty for any other path.
// `example` is a function's path for describe's comment.
std::string finder_member(std::string_view path, std::string_view example);

// FinderError: arguments the finder refuses; its message starts with the
// failure code the guest's Error carries ("invalid_request: ...",
// "no_such_tool: ...").
class FinderError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Finder: the callables' paths and descriptions, searched by words, and
// each one's declaration. Immutable once built; safe to share between
// threads.
class Finder {
 public:
  // Bounds on what a guest may ask: a query longer than this is refused,
  // words past the count are ignored, a call returns at most kMaxLimit hits.
  static constexpr std::size_t kMaxQueryBytes = 1024;
  static constexpr std::size_t kMaxWords = 16;
  static constexpr std::size_t kDefaultLimit = 20;
  static constexpr std::size_t kMaxLimit = 100;
  // A hit's description is cut (at a character boundary, with "...") past this.
  static constexpr std::size_t kHitDescriptionBytes = 240;

  explicit Finder(std::vector<DeclaredTool> tools);

  // `codemode.search(input)`: input is a query string or
  // {query?: string, limit?: number, offset?: number} (JSON text, as the
  // worker passes it). Returns the JSON text of
  // [{name: "codemode.<path>", description}], best first: a function whose
  // name holds a query word ranks above one whose description does; an
  // empty query lists them in catalogue order.
  std::string search(std::string_view input_json) const;

  // `codemode.describe(input)`: input is a name ("codemode.x.y" or "x.y")
  // or {name}. Returns the JSON text of its TypeScript declaration (search
  // and describe included).
  std::string describe(std::string_view input_json) const;

  std::size_t size() const noexcept { return tools_.size(); }

 private:
  std::vector<DeclaredTool> tools_;
  std::vector<std::string> paths_;              // dotted, as the guest calls them
  std::vector<std::string> lowered_paths_;      // for matching
  std::vector<std::string> lowered_described_;  // lowered descriptions
};

}  // namespace corral::mcp
