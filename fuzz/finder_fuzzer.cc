// fuzz/finder_fuzzer.cc: code mode's codemode.search and codemode.describe
// (mcp::Finder) on hostile guest arguments (any JSON text a guest can pass,
// and text that is not JSON at all).
//
// Invariants: no crash; a refusal is a FinderError whose message starts with
// a failure code; an answer is JSON of the promised shape (search: an array
// of at most kMaxLimit {name, description} with a name that was bound and a
// description within its cut; describe: a string declaring one function).
#include "fuzz_util.hpp"
#include "mcp/finder.hpp"

namespace json = corral::core::json;
using corral::fuzz::fail;
using corral::mcp::DeclaredTool;
using corral::mcp::Finder;

namespace {

const Finder& finder() {
  static const Finder f = [] {
    std::vector<DeclaredTool> tools;
    for (int i = 0; i < 150; ++i) {
      DeclaredTool t;
      t.path = i % 3 == 0 ? std::vector<std::string>{"srv", "tool" + std::to_string(i)}
                          : std::vector<std::string>{"cmd_" + std::to_string(i)};
      t.description = "Does thing " + std::to_string(i) + std::string(i % 7 == 0 ? 400 : 10, 'x') +
                      " caf\xc3\xa9 \xe2\x82\xac";
      t.input_schema = json::parse(R"({"type":"object","properties":{"a":{"type":"string"}}})");
      tools.push_back(std::move(t));
    }
    return Finder(std::move(tools));
  }();
  return f;
}

void check_refusal(const corral::mcp::FinderError& e, std::string_view input) {
  const std::string_view m = e.what();
  if (!m.starts_with("invalid_request: ") && !m.starts_with("no_such_tool: "))
    fail("a refusal without a failure code", m);
  if (!corral::fuzz::is_utf8(m)) fail("a refusal that is not UTF-8", input);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input = corral::fuzz::text_of(data, size);
  try {
    const json::value hits = json::parse(finder().search(input));
    if (!hits.is_array() || hits.as_array().size() > Finder::kMaxLimit)
      fail("search answered something else than at most kMaxLimit hits", input);
    for (const json::value& hit : hits.as_array()) {
      const json::string& name = hit.at("name").as_string();
      if (!name.starts_with("codemode.srv.tool") && !name.starts_with("codemode.cmd_"))
        fail("search answered a name that was not bound", input);
      if (hit.at("description").as_string().size() > Finder::kHitDescriptionBytes + 3)
        fail("a hit's description was not cut", input);
    }
  } catch (const corral::mcp::FinderError& e) {
    check_refusal(e, input);
  }
  try {
    const json::value declared = json::parse(finder().describe(input));
    if (!declared.is_string() || !declared.as_string().starts_with("declare const codemode: {"))
      fail("describe answered something else than a declaration", input);
  } catch (const corral::mcp::FinderError& e) {
    check_refusal(e, input);
  }
  return 0;
}
