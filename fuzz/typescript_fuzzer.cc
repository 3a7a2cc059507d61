// fuzz/typescript_fuzzer.cc: mcp::schema_to_typescript and declarations()
// on hostile JSON Schemas (an upstream MCP server supplies them).
//
// Invariants: no crash; the output is bounded by a small multiple of the
// schema's size (no exponential blow-up); a description can never close the
// JSDoc comment it is put in; identifiers are identifiers.
#include "fuzz_util.hpp"
#include "mcp/typescript.hpp"

namespace json = corral::core::json;
using corral::fuzz::fail;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = corral::fuzz::text_of(data, size);
  boost::system::error_code ec;
  json::value schema = json::parse(json::string_view(text.data(), text.size()), ec);
  if (ec) return 0;
  const std::string type = corral::mcp::schema_to_typescript(schema);
  // Indentation costs up to 2 bytes per level per line; 160 levels at most.
  if (type.size() > 64 + size * 400) fail("declarations blew up", text);

  corral::mcp::DeclaredTool tool;
  tool.path = {"tool"};
  if (const json::object* o = schema.if_object()) {
    if (const json::value* name = o->if_contains("title"); name && name->is_string()) {
      tool.path = {corral::mcp::js_identifier(std::string(name->get_string())), "x"};
    }
    if (const json::value* d = o->if_contains("description"); d && d->is_string()) {
      tool.description = std::string(d->get_string());
    }
  }
  tool.input_schema = schema;
  tool.output_schema = schema;
  const std::string declared = corral::mcp::declarations({tool});
  if (declared.size() > 256 + size * 1000) fail("declarations blew up", text);
  // A JSDoc line is one comment that ends where the line ends: a description
  // cannot close it early and put text outside it. ("*/" inside a quoted
  // property name is a string, not a comment.)
  for (const std::string& line : corral::fuzz::split(declared, '\n')) {
    const std::size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos || line.compare(first, 3, "/**") != 0) continue;
    const std::size_t close = line.find("*/", first + 3);
    if (close != line.size() - 2) fail("a description ends its comment early", line);
  }
  for (const std::string& segment : tool.path) {
    for (std::size_t i = 0; i < segment.size(); ++i) {
      const char c = segment[i];
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' ||
                      (i > 0 && c >= '0' && c <= '9');
      if (!ok) fail("js_identifier made a non-identifier", segment);
    }
  }
  return 0;
}
