// fuzz/upstream_page_fuzzer.cc: an upstream MCP server's tools/list page
// (mcp::read_tools_page) and what code mode makes of the tools it reads:
// their declarations (mcp::declarations) and compact mode's finder over
// them (mcp::Finder), as the catalogue builds both. The page is the
// upstream's to write: any JSON text, each tool's name, description,
// schemas and annotations of any type.
//
// Invariants: no crash and nothing thrown; a tool is read only from an
// object entry of a `tools` array with a string name, never more tools
// than entries; a tool is destructive only when its annotations say so
// with a boolean (destructiveHint true, or readOnlyHint false beside no
// boolean destructiveHint); the cursor is `nextCursor` when that is a
// string, else empty; the declarations are UTF-8 and declare `codemode`;
// describe answers every declared tool by name, and search by the first
// tool's identifier answers that tool first.
#include "fuzz_util.hpp"
#include "mcp/finder.hpp"
#include "mcp/typescript.hpp"
#include "mcp/upstream.hpp"

#include <set>

namespace json = corral::core::json;
using corral::fuzz::fail;

namespace {

// Whether `annotations` (an upstream tool's, as written) mark it destructive
// by MCP's reading. The rule restated, so it catches a change to
// read_tools_page's reading, not a misreading of MCP (that is the unit
// test's and docs/mcp.md's).
bool says_destructive(const json::object& tool) {
  const json::value* a = tool.if_contains("annotations");
  if (!a || !a->is_object()) return false;
  const json::value* d = a->as_object().if_contains("destructiveHint");
  const json::value* r = a->as_object().if_contains("readOnlyHint");
  if (d && d->is_bool()) return d->get_bool();
  return r && r->is_bool() && !r->get_bool();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = corral::fuzz::text_of(data, size);
  boost::system::error_code ec;
  const json::value page = json::parse(json::string_view(text.data(), text.size()), ec);
  if (ec || !page.is_object()) return 0;
  const json::object& result = page.as_object();

  std::vector<corral::mcp::UpstreamTool> tools;
  const std::string cursor = corral::mcp::read_tools_page(result, tools);

  const json::value* next = result.if_contains("nextCursor");
  if (cursor != (next && next->is_string() ? std::string(next->get_string()) : std::string()))
    fail("the cursor is not the page's nextCursor", text);
  const json::value* listed = result.if_contains("tools");
  const json::array* entries = listed ? listed->if_array() : nullptr;
  if (tools.size() > (entries ? entries->size() : 0)) fail("more tools than entries", text);
  // The tools are the named object entries, in order.
  std::size_t read = 0;
  if (entries) {
    for (const json::value& entry : *entries) {
      const json::object* o = entry.if_object();
      const json::value* name = o ? o->if_contains("name") : nullptr;
      if (!name || !name->is_string()) continue;
      if (read >= tools.size()) fail("a named tool was left out", text);
      const corral::mcp::UpstreamTool& tool = tools[read++];
      if (tool.name != std::string_view(name->get_string())) fail("a tool's name changed", text);
      if (tool.destructive != says_destructive(*o))
        fail("destructive differs from the annotations' boolean hints", text);
    }
  }
  if (read != tools.size()) fail("a tool came from no named entry", text);

  // As the catalogue declares them: `codemode.srv.<identifier>`, the first
  // of colliding identifiers kept.
  std::vector<corral::mcp::DeclaredTool> declared;
  std::set<std::string> seen;
  for (const corral::mcp::UpstreamTool& tool : tools) {
    const std::string id = corral::mcp::js_identifier(tool.name);
    if (!seen.insert(id).second) continue;
    declared.push_back({{"srv", id}, tool.description, tool.input_schema, tool.output_schema});
  }
  const std::string declarations = corral::mcp::declarations(declared);
  if (!corral::fuzz::is_utf8(declarations)) fail("declarations that are not UTF-8", text);
  if (!declarations.starts_with("declare const codemode")) fail("no codemode declared", text);
  if (declared.empty()) return 0;

  const corral::mcp::Finder finder(declared);
  for (const corral::mcp::DeclaredTool& tool : declared) {
    const std::string name = "srv." + tool.path[1];
    try {
      const json::value answer = json::parse(finder.describe(json::serialize(json::value(name))));
      if (!answer.is_string() || !answer.as_string().starts_with("declare const codemode: {"))
        fail("describe answered something else than a declaration", name);
    } catch (const corral::mcp::FinderError& e) {
      fail("a declared tool is not found by name", e.what());
    }
  }
  // Searching for the first tool's identifier finds it first: every word
  // of the query is in its name (three points each, the most any tool
  // scores) and ties keep the catalogue's order.
  const std::string first = "codemode.srv." + declared.front().path[1];
  try {
    const json::value hits =
        json::parse(finder.search(json::serialize(json::value(declared.front().path[1]))));
    if (!hits.is_array() || hits.as_array().empty() || !hits.as_array().front().is_object() ||
        hits.as_array().front().as_object().if_contains("name") == nullptr ||
        hits.as_array().front().at("name") != json::value(first))
      fail("search by a declared name did not find it first", first);
  } catch (const corral::mcp::FinderError& e) {
    fail("search refused a declared name", e.what());
  }
  return 0;
}
