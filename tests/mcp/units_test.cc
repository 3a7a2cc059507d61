// The pure parts: TypeScript from JSON Schema, the structural cut, the
// upstream setting, the task threads' exception boundary.
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>

#include "core/json.hpp"
#include "core/utf8.hpp"

#include "corral/mcp.hpp"
#include "mcp/budget.hpp"
#include "mcp/service.hpp"
#include "mcp/typescript.hpp"
#include "mcp/upstream.hpp"

namespace corral::mcp {
namespace {

namespace json = core::json;

TEST(McpTypeScript, RendersTheShapesToolSchemasUse) {
  const json::value schema = json::parse(R"({
    "type": "object",
    "properties": {
      "query": {"type": "string", "description": "What to look for"},
      "limit": {"type": "integer"},
      "mode": {"enum": ["fast", "slow"]},
      "tags": {"type": "array", "items": {"type": "string"}},
      "either": {"anyOf": [{"type": "string"}, {"type": "null"}]},
      "with-dash": {"type": "boolean"},
      "meta": {"type": "object", "additionalProperties": {"type": "number"}}
    },
    "required": ["query"],
    "additionalProperties": false
  })");
  const std::string ts = schema_to_typescript(schema);
  EXPECT_NE(ts.find("/** What to look for */"), std::string::npos) << ts;
  EXPECT_NE(ts.find("query: string;"), std::string::npos) << ts;
  EXPECT_NE(ts.find("limit?: number;"), std::string::npos) << ts;
  EXPECT_NE(ts.find(R"(mode?: "fast" | "slow";)"), std::string::npos) << ts;
  EXPECT_NE(ts.find("tags?: string[];"), std::string::npos) << ts;
  EXPECT_NE(ts.find("either?: string | null;"), std::string::npos) << ts;
  EXPECT_NE(ts.find(R"("with-dash"?: boolean;)"), std::string::npos) << ts;
  EXPECT_NE(ts.find("[key: string]: number;"), std::string::npos) << ts;
  EXPECT_EQ(schema_to_typescript(json::parse("{}")), "unknown");
  EXPECT_EQ(schema_to_typescript(json::parse(R"({"type":"object","additionalProperties":false})")),
            "{}");
}

// What MCP servers' schemas use beyond the basics (issue 18): local `$ref`s
// (pydantic's `$defs`), `allOf` as an intersection, `format` in the JSDoc.
TEST(McpTypeScript, ResolvesRefsAllOfAndSaysTheFormat) {
  const json::value schema = json::parse(R"({
    "type": "object",
    "$defs": {
      "Address": {"type": "object", "properties": {"city": {"type": "string"}},
                  "required": ["city"]},
      "Kind": {"enum": ["a", "b"]},
      "Loop": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Loop"}}}
    },
    "properties": {
      "home": {"$ref": "#/$defs/Address"},
      "kind": {"$ref": "#/$defs/Kind", "description": "Which one"},
      "when": {"type": "string", "format": "date-time", "description": "Start"},
      "both": {"allOf": [{"$ref": "#/$defs/Address"},
                         {"type": "object", "properties": {"zip": {"type": "string"}}}]},
      "loop": {"$ref": "#/$defs/Loop"},
      "remote": {"$ref": "https://example.com/schema.json"}
    },
    "required": ["home"]
  })");
  const std::string ts = schema_to_typescript(schema);
  EXPECT_NE(ts.find("home: {"), std::string::npos) << ts;
  EXPECT_NE(ts.find("city: string;"), std::string::npos) << ts;
  EXPECT_NE(ts.find(R"(kind?: "a" | "b";)"), std::string::npos) << ts;
  EXPECT_NE(ts.find("/** Start (format: date-time) */"), std::string::npos) << ts;
  EXPECT_NE(ts.find("} & {"), std::string::npos) << ts;  // both: the intersection
  EXPECT_NE(ts.find("zip?: string;"), std::string::npos) << ts;
  EXPECT_NE(ts.find("remote?: unknown;"), std::string::npos) << ts;
  // A reference to itself ends (a budget of references), in `unknown`.
  EXPECT_NE(ts.find("next?: unknown;"), std::string::npos) << ts;
  EXPECT_LT(ts.size(), 64u * 1024) << ts.size();
}

// References that fan out (each definition referring to the next twice)
// render within the reference budget, not exponentially.
TEST(McpTypeScript, FanningOutReferencesStayBounded) {
  std::string defs;
  for (int i = 0; i < 30; ++i) {
    defs += (i ? "," : "") + std::string("\"D") + std::to_string(i) +
            R"(":{"type":"object","properties":{"a":{"$ref":"#/$defs/D)" + std::to_string(i + 1) +
            R"("},"b":{"$ref":"#/$defs/D)" + std::to_string(i + 1) + "\"}}}";
  }
  const json::value schema = json::parse(R"({"$defs":{)" + defs + R"(},"$ref":"#/$defs/D0"})");
  const std::string ts = schema_to_typescript(schema);
  EXPECT_LT(ts.size(), 64u * 1024) << ts.size();
}

// Regression (fuzz_typescript): a type list that repeats "object" rendered
// the same subschema once per entry at every level, so 860 bytes of schema
// from an upstream server (4 entries, 13 levels) never finished. Each type
// is rendered once.
TEST(McpTypeScript, RepeatedTypesRenderOnceSoNestingStaysLinear) {
  std::string schema = "{}";
  for (int i = 0; i < 13; ++i) {
    schema = R"({"type":["object","object","object","object"],"properties":{"a":)" + schema + "}}";
  }
  const std::string ts = schema_to_typescript(json::parse(schema));
  EXPECT_LT(ts.size(), 4096u) << ts;
  EXPECT_EQ(schema_to_typescript(json::parse(R"({"type":["integer","number","string","number"]})")),
            "number | string");
  EXPECT_EQ(
      schema_to_typescript(json::parse(R"({"type":["array","array"],"items":{"type":"null"}})")),
      "null[]");
}

TEST(McpTypeScript, DeclarationsNestServersAndSanitiseNames) {
  std::vector<DeclaredTool> tools;
  tools.push_back({{"git_status"}, "Shows status", json::parse(R"({"type":"object"})"), nullptr});
  tools.push_back({{"everything", js_identifier("get-sum")},
                   "Adds */ numbers",
                   nullptr,
                   json::parse(R"({"type":"number"})")});
  const std::string d = declarations(tools);
  EXPECT_NE(d.find("declare const codemode: {"), std::string::npos) << d;
  EXPECT_NE(d.find("  everything: {\n"), std::string::npos) << d;
  EXPECT_NE(d.find("    get_sum(input: unknown): Promise<number>;"), std::string::npos) << d;
  EXPECT_NE(d.find("/** Adds * / numbers */"), std::string::npos) << d;
  EXPECT_NE(d.find("git_status(input: {\n"), std::string::npos) << d;
  EXPECT_EQ(js_identifier("9lives"), "_9lives");
  EXPECT_EQ(js_identifier("a.b-c"), "a_b_c");
}

TEST(McpBudget, LeavesFittingValuesAloneAndCutsOthersByShape) {
  const json::value small = json::parse(R"({"a":[1,2,3]})");
  Cut same = cut_to_budget(small, 100);
  EXPECT_FALSE(same.cut);
  EXPECT_EQ(same.value, small);

  json::array many;
  for (int i = 0; i < 1000; ++i) many.push_back(i);
  Cut array = cut_to_budget(many, 200);
  EXPECT_TRUE(array.cut);
  EXPECT_LE(json::serialize(array.value).size(), 240u);
  EXPECT_EQ(array.value.as_array()[0], 0);
  EXPECT_NE(std::string(array.value.as_array().back().as_string()).find("more items"),
            std::string::npos);

  json::object keys;
  for (int i = 0; i < 100; ++i) keys["key" + std::to_string(i)] = std::string(20, 'v');
  Cut object = cut_to_budget(keys, 300);
  EXPECT_TRUE(object.value.as_object().contains("[cut]"));

  // A string keeps a prefix on a UTF-8 boundary.
  std::string text;
  for (int i = 0; i < 200; ++i) text += "\xc3\xa9";  // é
  Cut str = cut_to_budget(json::value(text), 100);
  const std::string kept(str.value.as_string());
  EXPECT_EQ(kept.find("[cut: ") % 2, 0u);
  bool cut = false;
  EXPECT_EQ(cut_text("short", 100, cut), "short");
  EXPECT_FALSE(cut);
  EXPECT_NE(cut_text(std::string(500, 'x'), 100, cut).find("more bytes"), std::string::npos);
  EXPECT_TRUE(cut);
}

// A string cut for a JSON field: its serialized form (escapes counted) fits
// the allowance, the cut falls between characters and is marked.
TEST(McpBudget, JsonStringsAreCutByTheirSerializedSizeBetweenCharacters) {
  bool cut = false;
  EXPECT_EQ(cut_json_string("short", 100, cut), "short");
  EXPECT_FALSE(cut);
  std::string accents;
  for (int i = 0; i < 300; ++i) accents += "\xc3\xa9";  // é
  const std::string a = cut_json_string(accents, 101, cut);
  EXPECT_TRUE(cut);
  EXPECT_LE(json::serialize(json::string_view(a)).size(), 101u);
  EXPECT_TRUE(core::is_valid_utf8(a)) << a;
  EXPECT_EQ(a.find("\n[cut: ") % 2, 0u);
  EXPECT_NE(a.find("more bytes]"), std::string::npos);
  // Newlines and control characters take 2 and 6 bytes in JSON.
  for (const std::string& text :
       {std::string(5000, '\n'), std::string(5000, '\x01'), std::string(5000, '"')}) {
    cut = false;
    const std::string c = cut_json_string(text, 300, cut);
    EXPECT_TRUE(cut);
    EXPECT_LE(json::serialize(json::string_view(c)).size(), 300u);
    EXPECT_GT(json::serialize(json::string_view(c)).size(), 200u);  // not emptied
  }
}

TEST(McpUpstreams, ParsesTheSettingAndNamesWhatIsWrong) {
  auto ups = parse_upstreams(
      R"({"everything": {"command": ["node", "server.js", "stdio"]}, "remote": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer x"}}})");
  ASSERT_EQ(ups.size(), 2u);
  EXPECT_EQ(ups[0].name, "everything");
  EXPECT_EQ(ups[0].command.size(), 3u);
  EXPECT_EQ(ups[1].url, "http://127.0.0.1:9/mcp");
  EXPECT_EQ(ups[1].headers.at("Authorization"), "Bearer x");
  EXPECT_TRUE(parse_upstreams("").empty());
  auto message = [](const std::string& text) {
    try {
      parse_upstreams(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_NE(message(R"({"a": {}})").find("give a command or a url"), std::string::npos);
  EXPECT_NE(message(R"({"a": {"url": "https://x"}})").find("http://"), std::string::npos);
  EXPECT_NE(message(R"({"a": {"command": [], "x": 1}})").find("upstream \"a\""), std::string::npos);
  EXPECT_NE(message("/no/such/file").find("cannot read"), std::string::npos);
  EXPECT_NE(message("{nope").find("JSON object"), std::string::npos);
}

TEST(McpTasks, AnExceptionLeavingATaskIsLoggedNotFatal) {
  std::mutex mutex;
  std::vector<std::string> logged;
  {
    Tasks tasks([&](const std::string& message) {
      std::lock_guard lock(mutex);
      logged.push_back(message);
    });
    tasks.spawn([] { throw std::runtime_error("a bug in a handler"); });
    tasks.spawn([] { throw 42; });
    tasks.wait_idle();
  }
  ASSERT_EQ(logged.size(), 2u);
  auto has = [&](std::string_view part) {
    return std::any_of(logged.begin(), logged.end(),
                       [&](const std::string& m) { return m.find(part) != std::string::npos; });
  };
  EXPECT_TRUE(has("a bug in a handler"));
  EXPECT_TRUE(has("not a std::exception"));
}

// An upstream's tools/list page is the server's to write: a hint of the
// wrong type is no hint (so a readOnlyHint false beside it still counts),
// entries that are no tools are skipped, and a page of 100,000 annotated
// tools is read whole.
TEST(UpstreamToolsPage, HostileAnnotationsAreReadByTypeAndAHugePageWhole) {
  const json::value page = json::parse(R"({"tools": [
    {"name": "a", "annotations": {"destructiveHint": "true"}},
    {"name": "b", "annotations": {"destructiveHint": 1, "readOnlyHint": false}},
    {"name": "c", "annotations": {"readOnlyHint": "false"}},
    {"name": "d", "annotations": [true]},
    {"name": "e", "annotations": {"destructiveHint": null, "readOnlyHint": false}},
    {"name": "f", "annotations": {"destructiveHint": true, "readOnlyHint": true}},
    {"name": "g", "annotations": {"readOnlyHint": false}},
    {"name": 7}, "h", null,
    {"name": "i", "annotations": {"destructiveHint": false, "readOnlyHint": false}}],
    "nextCursor": 5})");
  std::vector<UpstreamTool> tools;
  EXPECT_EQ(read_tools_page(page.as_object(), tools), "");
  std::string destructive;
  std::string names;
  for (const UpstreamTool& t : tools) {
    names += t.name;
    if (t.destructive) destructive += t.name;
  }
  EXPECT_EQ(names, "abcdefgi");
  // b, e: a destructiveHint that is no boolean leaves readOnlyHint false to decide.
  EXPECT_EQ(destructive, "befg");

  json::array many;
  for (int i = 0; i < 100'000; ++i)
    many.push_back(json::object{{"name", "t" + std::to_string(i)},
                                {"annotations", json::object{{"destructiveHint", i % 2 == 0}}}});
  std::vector<UpstreamTool> all;
  EXPECT_EQ(read_tools_page(json::object{{"tools", std::move(many)}, {"nextCursor", "next"}}, all),
            "next");
  ASSERT_EQ(all.size(), 100'000u);
  EXPECT_TRUE(all.front().destructive);
  EXPECT_FALSE(all.back().destructive);
}

}  // namespace
}  // namespace corral::mcp
