// src/mcp/typescript.hpp: TypeScript declarations from JSON Schemas, for the
// description of the `execute` tool (code mode writes typed calls).
#pragma once

#include <string>
#include <vector>

#include "core/json.hpp"

namespace corral::mcp {

namespace json = core::json;  // Boost.JSON with corral's writer

// The TypeScript type a JSON Schema describes: object properties (optional
// unless required), arrays, enums and consts, unions (anyOf/oneOf, type
// lists), intersections (allOf), local `$ref`s (`#/$defs/X`, resolved
// against `schema` itself, at most 64 per schema), `unknown` for what it
// cannot express. Descriptions and `format` become JSDoc comments on
// properties. `indent` is the current nesting.
std::string schema_to_typescript(const json::value& schema, int indent = 0);

// DeclaredTool: one callable as the declarations show it.
struct DeclaredTool {
  std::vector<std::string> path;  // below `codemode`: {"git_status"} or {"everything", "echo"}
  std::string description;
  json::value input_schema;   // null: unknown input
  json::value output_schema;  // null: Promise<unknown>
};

// `declare const codemode: { ... };` with one method per tool, grouped by
// path (servers become nested objects).
std::string declarations(const std::vector<DeclaredTool>& tools);

// A JavaScript identifier for `name` (characters outside [A-Za-z0-9_$]
// become '_'; a leading digit gets a '_' in front).
std::string js_identifier(const std::string& name);

}  // namespace corral::mcp
