// The tools: execute (code mode calling bound commands), direct and compact
// command tools, failures as isError results, the result budget, progress,
// and cancellation that leaves no process behind.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>

#include "corral/bind_cli11.hpp"
#include "mcp_test_util.hpp"

namespace corral::mcp::testing {
namespace {

// Whether a text block of `result` holds `text` (other blocks skipped).
bool says(const json::object& result, std::string_view text) {
  for (const auto& block : result.at("content").as_array()) {
    const json::value* t = block.as_object().if_contains("text");
    if (t && t->is_string() && std::string_view(t->get_string()).find(text) != std::string::npos)
      return true;
  }
  return false;
}

// Bytes the service keeps of what cuts dropped (its status).
std::size_t kept_bytes(const Service& service) {
  return json::parse(service.status_json()).at("kept_results").at("bytes").to_number<std::size_t>();
}

// The result's resource_link blocks, by name.
std::map<std::string, json::object> links_of(const json::object& result) {
  std::map<std::string, json::object> links;
  for (const auto& block : result.at("content").as_array())
    if (block.at("type") == "resource_link")
      links[std::string(block.at("name").as_string())] = block.as_object();
  return links;
}

json::object failure_of(const json::object& result) {
  EXPECT_TRUE(result.contains("isError") && result.at("isError").as_bool());
  return json::parse(text_of(result)).as_object();
}

TEST(McpTools, ListsExecuteAndEachCommandWithSchemasAndAnnotations) {
  Harness h;
  json::value r = h.request("tools/list");
  const json::array& tools = r.at("result").at("tools").as_array();
  ASSERT_EQ(tools.size(), 5u);
  EXPECT_EQ(tools[0].at("name").as_string(), "execute");
  EXPECT_TRUE(tools[0].as_object().contains("outputSchema"));
  const std::string description(tools[0].at("description").as_string());
  EXPECT_NE(description.find("declare const codemode"), std::string::npos);
  EXPECT_NE(description.find("fixture_greet(input: {"), std::string::npos);
  EXPECT_NE(description.find("/** Who to greet */"), std::string::npos);
  const json::object* greet = nullptr;
  for (const auto& t : tools)
    if (t.at("name").as_string() == "fixture_greet") greet = &t.as_object();
  ASSERT_NE(greet, nullptr);
  EXPECT_EQ(greet->at("title").as_string(), "Greet someone");
  const json::object& a = greet->at("annotations").as_object();
  EXPECT_EQ(a.at("title").as_string(), "Greet someone");
  EXPECT_TRUE(a.at("readOnlyHint").as_bool());
  EXPECT_FALSE(a.at("destructiveHint").as_bool());
  EXPECT_TRUE(a.at("idempotentHint").as_bool());
  EXPECT_FALSE(a.at("openWorldHint").as_bool());
  EXPECT_EQ(greet->at("inputSchema").at("type").as_string(), "object");
}

// What a model would otherwise guess wrong is in the description: the
// language, the frozen clock, how failures surface, and a worked example on
// a command actually bound, which runs as written.
TEST(McpTools, TheExecuteDescriptionSaysWhatAModelWouldGuessWrong) {
  Harness h;
  json::value r = h.request("tools/list");
  const std::string description(r.at("result").at("tools").at(0).at("description").as_string());
  for (const char* fact : {"Run TypeScript", "`enum`", "`Date.now()` is 0",
                           "command_failed: ", "exitCode", "For example:"}) {
    EXPECT_NE(description.find(fact), std::string::npos) << fact << "\n" << description;
  }
  const std::size_t example = description.find("For example:\n\n```ts\n");
  ASSERT_NE(example, std::string::npos);
  const std::size_t begin = example + std::string("For example:\n\n```ts\n").size();
  const std::string code = description.substr(begin, description.find("```", begin) - begin);
  EXPECT_NE(code.find("codemode.fixture_"), std::string::npos) << code;
  json::object ran = h.call("execute", {{"code", code}});
  EXPECT_FALSE(ran.contains("isError") && ran.at("isError").as_bool()) << json::serialize(ran);
}

TEST(McpTools, ExecuteChainsBoundCommandsAndReturnsStructuredContent) {
  Harness h;
  json::object r = h.call(
      "execute", {{"code",
                   "async () => { const a = await codemode.fixture_greet({flags: {name: 'a'}});"
                   " const b = await codemode.fixture_greet({flags: {name: 'b'}});"
                   " console.log('two calls'); return [a.stdout, b.stdout]; }"}});
  EXPECT_FALSE(r.contains("isError"));
  EXPECT_EQ(json::serialize(r.at("structuredContent")), R"({"value":["hello, a\n","hello, b\n"]})");
  EXPECT_EQ(text_of(r, 0), R"(["hello, a\n","hello, b\n"])");
  EXPECT_EQ(text_of(r, 1), "stdout:\ntwo calls\n");
}

// 128 levels, the documented depth, arrive whole in structuredContent and
// the text, for JavaScript and Ruby (parse_or_null made them null at 32).
TEST(McpTools, ExecuteKeepsAValueNestedToTheDocumentedDepth) {
  Harness h;
  const std::string deep = std::string(128, '[') + "0" + std::string(128, ']');
  for (const auto& [language, code] :
       {std::pair{"javascript", "let v = 0; for (let i = 0; i < 128; i++) v = [v]; v"},
        std::pair{"ruby", "v = 0; 128.times { v = [v] }; v"}}) {
    SCOPED_TRACE(language);
    json::object r = h.call("execute", {{"language", language}, {"code", code}});
    EXPECT_FALSE(r.contains("isError")) << text_of(r);
    EXPECT_EQ(json::serialize(r.at("structuredContent")), "{\"value\":" + deep + "}");
    EXPECT_EQ(text_of(r, 0), deep);
  }
}

TEST(McpTools, ExecuteFailuresAreErrorResultsWithTheCodeAndTheOutput) {
  Harness h;
  json::object thrown = h.call("execute", {{"code",
                                            "async () => { console.log('before'); "
                                            "throw new Error('boom'); }"}});
  json::object f = failure_of(thrown);
  EXPECT_EQ(f.at("code").as_string(), "guest_error");
  EXPECT_FALSE(f.at("retryable").as_bool());
  EXPECT_EQ(text_of(thrown, 1), "stdout:\nbefore\n");

  json::object spun =
      h.call("execute", {{"code", "async () => { while (true) {} }"}, {"timeout", 200}});
  EXPECT_EQ(failure_of(spun).at("code").as_string(), "timeout");

  json::object bad = h.call("execute", {{"code", 42}});
  EXPECT_EQ(failure_of(bad).at("code").as_string(), "invalid_request");
  json::object extra = h.call("execute", {{"code", "1"}, {"nope", 1}});
  EXPECT_EQ(failure_of(extra).at("code").as_string(), "invalid_request");

  // A failing command inside code mode is an exception the guest can catch.
  json::object caught =
      h.call("execute", {{"code",
                          "async () => { try { await codemode.fixture_fail({}); } catch (e) {"
                          " return e.message; } }"}});
  const std::string message(caught.at("structuredContent").at("value").as_string());
  EXPECT_NE(message.find("command_failed"), std::string::npos) << message;
  EXPECT_NE(message.find("about to fail"), std::string::npos) << message;
}

TEST(McpTools, ExecuteRunsRubyWhenAskedWithTheFunctionsAsCodemodeConstants) {
  Harness h;
  json::value listed = h.request("tools/list");
  const json::object& execute = listed.at("result").at("tools").at(0).as_object();
  EXPECT_EQ(json::serialize(execute.at("inputSchema").at("properties").at("language").at("enum")),
            R"(["typescript","javascript","ruby"])");
  EXPECT_NE(std::string(execute.at("description").as_string()).find("Codemode::A.b(x: 1)"),
            std::string::npos);

  json::object r = h.call("execute", {{"language", "ruby"},
                                      {"code",
                                       "a = Codemode.fixture_greet(flags: {name: 'a'})\n"
                                       "puts 'one call'\n"
                                       "[a['stdout'], RUBY_ENGINE]"}});
  EXPECT_FALSE(r.contains("isError")) << text_of(r);
  EXPECT_EQ(json::serialize(r.at("structuredContent")), R"({"value":["hello, a\n","mruby"]})");
  EXPECT_EQ(text_of(r, 1), "stdout:\none call\n");

  json::object raised =
      h.call("execute", {{"language", "ruby"}, {"code", "raise KeyError, 'no key'"}});
  json::object f = failure_of(raised);
  EXPECT_EQ(f.at("code").as_string(), "guest_error");
  EXPECT_NE(std::string(f.at("message").as_string()).find("KeyError"), std::string::npos);

  json::object unknown = h.call("execute", {{"language", "cobol"}, {"code", "1"}});
  EXPECT_EQ(failure_of(unknown).at("code").as_string(), "invalid_request");
  json::object typed = h.call("execute", {{"language", 7}, {"code", "1"}});
  EXPECT_EQ(failure_of(typed).at("code").as_string(), "invalid_request");
}

TEST(McpTools, DirectCommandToolsAnswerTheOutputViewOrAnErrorWithTheCode) {
  Harness h;
  json::object ok = h.call("fixture_greet", {{"flags", {{"name", "bob"}}}});
  EXPECT_EQ(text_of(ok), "hello, bob\n");
  EXPECT_EQ(ok.at("structuredContent").at("exitCode").to_number<int>(), 0);

  json::object failed = h.call("fixture_fail", {});
  EXPECT_EQ(failure_of(failed).at("code").as_string(), "command_failed");
  EXPECT_NE(text_of(failed, 1).find("about to fail"), std::string::npos);

  json::object invalid = h.call("fixture_greet", {{"flags", {{"nope", 1}}}});
  EXPECT_EQ(failure_of(invalid).at("code").as_string(), "invalid_request");
}

TEST(McpTools, BusyCommandsSayTheyAreRetryable) {
  Harness h;
  const std::string dir = ::testing::TempDir();
  // The fixture has two slots: fill them, then a third call is busy.
  std::vector<std::shared_ptr<Recorder>> running;
  for (int i = 0; i < 2; ++i) {
    const std::string pids = fifo(dir + "/busy_pids_" + std::to_string(i));
    running.push_back(h.start(
        "tools/call",
        json::object{{"name", "fixture_spawn"}, {"arguments", {{"flags", {{"pids", pids}}}}}}));
    EXPECT_EQ(read_pids(pids).size(), 3u);  // the command runs: its slot is taken
  }
  json::object busy = h.call("fixture_greet", {});
  json::object f = failure_of(busy);
  EXPECT_EQ(f.at("code").as_string(), "busy");
  EXPECT_TRUE(f.at("retryable").as_bool());
  // Closing the session answers both (they were not cancelled by the client).
  h.session().close();
  for (auto& r : running)
    EXPECT_EQ(failure_of(r->wait().at("result").as_object()).at("code"), "cancelled");
}

TEST(McpTools, CancellingACommandCallLeavesNoProcessOfItsTree) {
  Harness h;
  const std::string pids = fifo(::testing::TempDir() + "/cancel_pids");
  auto call = h.start("tools/call",
                      json::object{{"name", "fixture_spawn"},
                                   {"arguments", {{"flags", {{"pids", pids}}}}},
                                   {"_meta", {{"progressToken", "p1"}}}},
                      json::value("long"));
  const std::vector<int> tree = read_pids(pids);
  ASSERT_EQ(tree.size(), 3u);
  for (int pid : tree) EXPECT_TRUE(alive(pid)) << pid;
  h.notify("notifications/cancelled", json::object{{"requestId", "long"}, {"reason", "test"}});
  EXPECT_TRUE(call->wait().is_null());
  // finish() runs after the supervisor confirmed the unit empty.
  for (int pid : tree) EXPECT_FALSE(alive(pid)) << pid;
  bool progress = false;
  for (const auto& n : call->notifications())
    progress = progress || (n.at("method").as_string() == "notifications/progress" &&
                            n.at("params").at("progressToken").as_string() == "p1");
  EXPECT_TRUE(progress);
}

TEST(McpTools, CancellingAnExecuteRunStopsItAndTheCommandsItStarted) {
  Harness h;
  const std::string pids = fifo(::testing::TempDir() + "/cancel_exec_pids");
  auto call = h.start(
      "tools/call",
      json::object{
          {"name", "execute"},
          {"arguments",
           {{"code", "async () => codemode.fixture_spawn({flags: {pids: '" + pids + "'}})"}}}},
      json::value(77));
  const std::vector<int> tree = read_pids(pids);
  ASSERT_EQ(tree.size(), 3u);
  h.notify("notifications/cancelled", json::object{{"requestId", 77}});
  EXPECT_TRUE(call->wait().is_null());
  h.service().shutdown();  // waits for the command's cleanup
  for (int pid : tree) EXPECT_FALSE(alive(pid)) << pid;
}

TEST(McpTools, LongCallsReportProgressWhileTheyRun) {
  Options options;
  options.progress_interval = std::chrono::milliseconds(50);
  Harness h(std::move(options));
  auto call = h.start(
      "tools/call",
      json::object{{"name", "execute"},
                   {"arguments", {{"code", "async () => { while (true) {} }"}, {"timeout", 1000}}},
                   {"_meta", {{"progressToken", 7}}}});
  EXPECT_FALSE(call->wait().is_null());
  std::vector<double> progress;
  for (const auto& n : call->notifications()) {
    if (n.at("method").as_string() != "notifications/progress") continue;
    EXPECT_EQ(n.at("params").at("progressToken").to_number<int>(), 7);
    progress.push_back(n.at("params").at("progress").to_number<double>());
  }
  EXPECT_GE(progress.size(), 2u);
  for (std::size_t i = 1; i < progress.size(); ++i) EXPECT_GT(progress[i], progress[i - 1]);
  // Without a token, nothing.
  auto quiet = h.start(
      "tools/call",
      json::object{{"name", "execute"},
                   {"arguments", {{"code", "async () => { while (true) {} }"}, {"timeout", 300}}}});
  quiet->wait();
  EXPECT_TRUE(quiet->notifications().empty());
}

TEST(McpTools, ResultsPastTheBudgetAreCutStructurallyAndSaySo) {
  Options options;
  options.result_budget = 1000;
  Harness h(std::move(options));
  json::object r = h.call(
      "execute",
      {{"code", "async () => Array.from({length: 500}, (_, i) => ({i, s: 'x'.repeat(20)}))"}});
  const json::object& structured = r.at("structuredContent").as_object();
  EXPECT_TRUE(structured.at("truncated").as_bool());
  const json::array& value = structured.at("value").as_array();
  EXPECT_LT(value.size(), 500u);
  EXPECT_GT(value.size(), 3u);
  EXPECT_EQ(std::string(value.back().as_string()).rfind("[cut: ", 0), 0u);
  EXPECT_LE(json::serialize(structured).size(), 1100u);
  EXPECT_TRUE(says(r, "result budget"));

  json::object big = h.call("fixture_big", {});
  EXPECT_TRUE(big.at("structuredContent").at("truncated").as_bool());
  EXPECT_LE(text_of(big).size(), 1100u);
  // Cut inside its strings: every field of the output schema is still there.
  EXPECT_EQ(big.at("structuredContent").at("exitCode"), 0);
  EXPECT_EQ(big.at("structuredContent").at("stderr"), "");
  EXPECT_LE(json::serialize(big.at("structuredContent")).size(), 1000u);
}

// `seq 1 1000000` (6.9 MB) as a direct command tool: the result is cut to the
// 64 KiB budget inside stdout (between characters, marked), keeps every field
// its outputSchema requires and says `truncated`. It used to lose stderr and
// exitCode and gain a "[cut]" key, which a client that checks structured
// content against the schema (the official SDK) rejects.
TEST(McpTools, ACommandResultPastTheBudgetKeepsItsOutputSchema) {
  Options options;
  options.manifests = {std::string(CORRAL_SOURCE_DIR) + "/tests/mcp/fixtures/seq.yaml"};
  Harness h(std::move(options));
  json::value list = h.request("tools/list");
  const json::object* tool = nullptr;
  for (const auto& t : list.at("result").at("tools").as_array())
    if (t.at("name").as_string() == "seq") tool = &t.as_object();
  ASSERT_NE(tool, nullptr) << json::serialize(list);
  const json::object& schema = tool->at("outputSchema").as_object();

  json::object small = h.call("seq", {{"args", json::array{"1", "3"}}});
  EXPECT_EQ(json::serialize(small.at("structuredContent")),
            R"({"stdout":"1\n2\n3\n","stderr":"","exitCode":0,"truncated":false})");

  json::object r = h.call("seq", {{"args", json::array{"1", "1000000"}}});
  EXPECT_FALSE(r.contains("isError")) << json::serialize(r).substr(0, 500);
  const json::value& structured = r.at("structuredContent");
  EXPECT_EQ(schema_mismatch(structured, schema), "");
  EXPECT_EQ(structured.at("exitCode"), 0);
  EXPECT_EQ(structured.at("stderr"), "");
  EXPECT_EQ(structured.at("truncated"), true);
  const std::string out(structured.at("stdout").as_string());
  EXPECT_EQ(out.rfind("1\n2\n3\n4\n", 0), 0u);
  EXPECT_NE(out.find("more bytes]"), std::string::npos);
  const std::size_t size = json::serialize(structured).size();
  EXPECT_LE(size, std::size_t{64} << 10);
  EXPECT_GT(size, std::size_t{60} << 10);  // the budget is used, not wasted
  EXPECT_TRUE(says(r, "result budget"));
}

// Nothing is lost at a cut: each part the budget cut is kept whole as a
// resource the result links to; resources/read gives it back byte for byte,
// whole or a page at a time; it is the session's own, and goes with it.
TEST(McpTools, WhatACutDropsIsKeptAsAResourceTheSessionCanPageThrough) {
  Options options;
  options.result_budget = 1000;
  Harness h(std::move(options));
  json::object r = h.call(
      "execute", {{"code",
                   "async () => { console.log('line\\n'.repeat(3000));"
                   " return Array.from({length: 500}, (_, i) => ({i, s: 'x'.repeat(20)})); }"}});
  ASSERT_TRUE(r.at("structuredContent").at("truncated").as_bool()) << json::serialize(r);
  auto links = links_of(r);
  ASSERT_EQ(links.size(), 2u) << json::serialize(r.at("content"));
  const json::object& value_link = links.at("value.json");
  EXPECT_EQ(value_link.at("mimeType"), "application/json");
  EXPECT_EQ(std::string(value_link.at("uri").as_string()).rfind("corral://results/", 0), 0u);
  EXPECT_TRUE(says(r, "resources/read"));

  json::value read = h.request("resources/read", json::object{{"uri", value_link.at("uri")}});
  const json::value& contents = read.at("result").at("contents").at(0);
  const json::value whole = json::parse(contents.at("text").as_string());
  ASSERT_EQ(whole.as_array().size(), 500u);
  EXPECT_EQ(whole.at(499).at("i"), 499);
  EXPECT_EQ(contents.at("text").as_string().size(), value_link.at("size").to_number<std::size_t>());

  const std::string stdout_uri(links.at("stdout.txt").at("uri").as_string());
  json::value page =
      h.request("resources/read", json::object{{"uri", stdout_uri + "?offset=5&length=10"}});
  EXPECT_EQ(page.at("result").at("contents").at(0).at("text"), "line\nline\n");
  // The page says where it begins and how large the whole is (found by a
  // hostile review: nothing said whether more followed); a parameter given
  // twice is refused, not read as its first.
  EXPECT_EQ(page.at("result").at("contents").at(0).at("_meta").at("corral/offset"), 5);
  EXPECT_EQ(page.at("result").at("contents").at(0).at("_meta").at("corral/size"), 15001);
  EXPECT_EQ(h.request("resources/read",
                      json::object{{"uri", stdout_uri + "?offset=5&offset=0&length=10"}})
                .at("error")
                .at("code"),
            -32602);
  json::value whole_out = h.request("resources/read", json::object{{"uri", stdout_uri}});
  EXPECT_EQ(whole_out.at("result").at("contents").at(0).at("text").as_string().size(), 15001u);

  json::value listed = h.request("resources/list");
  EXPECT_EQ(listed.at("result").at("resources").as_array().size(), 2u) << json::serialize(listed);
  for (const auto& resource : listed.at("result").at("resources").as_array())
    EXPECT_EQ(resource.at("size"),
              links.at(std::string(resource.at("name").as_string())).at("size"));

  // Malformed pages are refused; a URI not kept is "Resource not found".
  json::value bad = h.request("resources/read", json::object{{"uri", stdout_uri + "?offset=x"}});
  EXPECT_EQ(bad.at("error").at("code"), -32602);
  json::value other = h.request(
      "resources/read", json::object{{"uri", "corral://results/" + std::string(100000, 'a')}});
  EXPECT_EQ(other.at("error").at("code"), -32002);
  EXPECT_LT(json::serialize(other).size(), 1000u);

  // Another session of the same service reads none of it.
  Session second(h.service_ptr());
  auto init = std::make_shared<Recorder>();
  second.handle(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":)"
                R"("2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}})",
                init);
  init->wait();
  auto foreign = std::make_shared<Recorder>();
  second.handle(json::serialize(json::object{{"jsonrpc", "2.0"},
                                             {"id", 2},
                                             {"method", "resources/read"},
                                             {"params", json::object{{"uri", stdout_uri}}}}),
                foreign);
  EXPECT_EQ(foreign->wait().at("error").at("code"), -32002);
  second.close();
  // Its own session's close drops them.
  const std::size_t kept = kept_bytes(h.service());
  EXPECT_GT(kept, 15000u);
  h.session().close();
  EXPECT_EQ(kept_bytes(h.service()), 0u);
}

// Found by a hostile review: a guest's error message was not held to the
// result budget (16 KB through a 1 KiB budget) nor kept. Now it is cut like
// the console, and kept whole as message.txt.
TEST(McpTools, AGuestErrorMessageIsHeldToTheBudgetAndKeptWhole) {
  Options options;
  options.result_budget = 1024;
  Harness h(std::move(options));
  json::object r = h.call("execute", {{"code",
                                       "async () => { console.log('o'.repeat(5000));"
                                       " throw new Error('m'.repeat(16000) + 'END'); }"}});
  EXPECT_EQ(r.at("isError"), true);
  std::size_t text_bytes = 0;
  for (const auto& block : r.at("content").as_array())
    if (block.at("type") == "text") text_bytes += block.at("text").as_string().size();
  EXPECT_LE(text_bytes, 1600u) << json::serialize(r);
  const std::string first(r.at("content").at(0).at("text").as_string());
  EXPECT_NE(first.find("guest_error"), std::string::npos) << first;
  EXPECT_NE(first.find("more bytes]"), std::string::npos) << first;
  auto links = links_of(r);
  ASSERT_TRUE(links.count("message.txt")) << json::serialize(r.at("content"));
  ASSERT_TRUE(links.count("stdout.txt")) << json::serialize(r.at("content"));
  const json::value read =
      h.request("resources/read", json::object{{"uri", links.at("message.txt").at("uri")}});
  const std::string whole(read.at("result").at("contents").at(0).at("text").as_string());
  EXPECT_NE(whole.find(std::string(16000, 'm') + "END"), std::string::npos);
  // The next call is served.
  EXPECT_EQ(h.call("execute", {{"code", "async () => 5"}}).at("structuredContent").at("value"), 5);
}

// The store is bounded: a part larger than all of it is not kept (the cut
// note still says what was cut), and the oldest parts go first.
TEST(McpTools, KeptResultsAreBoundedInBytesOldestFirst) {
  Options options;
  options.result_budget = 1000;
  options.result_retention_bytes = 50'000;
  Harness h(std::move(options));
  json::object huge = h.call("execute", {{"code", "async () => 'x'.repeat(60000)"}});
  EXPECT_TRUE(links_of(huge).empty()) << json::serialize(huge.at("content"));
  EXPECT_TRUE(says(huge, "result budget"));
  EXPECT_TRUE(says(huge, "[not kept (larger than the server keeps"));
  EXPECT_FALSE(says(huge, "is kept whole"));
  std::vector<std::string> uris;
  for (int i = 0; i < 3; ++i) {
    json::object r = h.call("execute", {{"code", "async () => 'y'.repeat(20000)"}});
    uris.emplace_back(links_of(r).at("value.json").at("uri").as_string());
  }
  EXPECT_EQ(h.request("resources/read", json::object{{"uri", uris[0]}}).at("error").at("code"),
            -32002);
  EXPECT_TRUE(
      h.request("resources/read", json::object{{"uri", uris[2]}}).as_object().contains("result"));
  EXPECT_LE(kept_bytes(h.service()), 50'000u);

  // Found by a hostile review: a result whose parts together overfill the
  // store kept its stdout by evicting its own value.json, then linked both.
  // A result's parts are kept together: every link it gives reads, and the
  // part that did not fit is named as not kept.
  json::object pair = h.call(
      "execute",
      {{"code", "async () => { console.log('o'.repeat(30000)); return 'v'.repeat(30000); }"}});
  const auto links = links_of(pair);
  ASSERT_EQ(links.size(), 1u) << json::serialize(pair.at("content"));
  for (const auto& [name, link] : links) {
    EXPECT_TRUE(h.request("resources/read", json::object{{"uri", link.at("uri")}})
                    .as_object()
                    .contains("result"))
        << name << " is linked but was not kept";
  }
  EXPECT_TRUE(says(pair, "[not kept (larger than the server keeps")) << json::serialize(pair);
  EXPECT_LE(kept_bytes(h.service()), 50'000u);
}

// A client of a revision before resource_link (2025-03-26) gets the URI in a
// text block instead, and a direct command tool keeps its cut stdout too.
TEST(McpTools, OlderClientsGetTheKeptURIAsText) {
  Options options;
  options.manifests = {std::string(CORRAL_SOURCE_DIR) + "/tests/mcp/fixtures/seq.yaml"};
  Harness h(std::move(options), false);
  h.request("initialize",
            json::object{{"protocolVersion", "2025-03-26"},
                         {"capabilities", json::object{}},
                         {"clientInfo", json::object{{"name", "old"}, {"version", "1"}}}});
  h.notify("notifications/initialized");
  json::object r = h.call("seq", {{"args", json::array{"1", "100000"}}});
  EXPECT_TRUE(links_of(r).empty());
  std::string uri;
  for (const auto& block : r.at("content").as_array()) {
    const std::string text(block.at("text").as_string());
    if (const auto at = text.find("corral://results/"); at != std::string::npos)
      uri = text.substr(at, text.find(']', at) - at);
  }
  ASSERT_FALSE(uri.empty()) << json::serialize(r.at("content"));
  json::value read = h.request("resources/read", json::object{{"uri", uri}});
  const std::string out(read.at("result").at("contents").at(0).at("text").as_string());
  EXPECT_EQ(out.size(), 588895u);  // seq 1 100000, every byte
  EXPECT_EQ(out.substr(out.size() - 7), "100000\n");
}

// A Harness whose client declares elicitation (or not), with fixture_greet
// listed for approval unless `options` say otherwise.
std::unique_ptr<Harness> approving_harness(bool elicits, Options options = {}) {
  if (options.approve.empty() && options.upstreams.empty()) options.approve = {"fixture_greet"};
  auto h = std::make_unique<Harness>(std::move(options), false);
  json::object capabilities;
  if (elicits) capabilities["elicitation"] = json::object{};
  h->request("initialize",
             json::object{{"protocolVersion", "2025-11-25"},
                          {"capabilities", capabilities},
                          {"clientInfo", json::object{{"name", "t"}, {"version", "1"}}}});
  h->notify("notifications/initialized");
  return h;
}

constexpr const char* kApprovedCode =
    "async () => { try { return (await codemode.fixture_greet({flags: {name: 'ok'}})).stdout; }"
    " catch (e) { return 'refused: ' + e.message; } }";

// Code mode asks the user (elicitation/create, related to the execute call)
// before it runs a listed function; the user's action decides.
TEST(McpApprovals, ListedFunctionsRunOnlyWhenTheUserAccepts) {
  for (const std::string action : {"accept", "decline", "cancel"}) {
    auto h = approving_harness(true);
    auto call = h->start(
        "tools/call", json::object{{"name", "execute"}, {"arguments", {{"code", kApprovedCode}}}});
    const json::value ask = call->wait_for("elicitation/create");
    ASSERT_TRUE(ask.is_object()) << action;
    const std::string message(ask.at("params").at("message").as_string());
    EXPECT_NE(message.find("codemode.fixture_greet"), std::string::npos) << message;
    EXPECT_NE(message.find("\"name\":\"ok\""), std::string::npos) << message;
    EXPECT_EQ(ask.at("params").at("requestedSchema").at("type"), "object");
    h->raw(json::serialize(json::object{{"jsonrpc", "2.0"},
                                        {"id", ask.at("id")},
                                        {"result", json::object{{"action", action}}}}))
        ->wait();
    const json::value r = call->wait();
    const std::string value(r.at("result").at("structuredContent").at("value").as_string());
    if (action == "accept") {
      EXPECT_EQ(value, "hello, ok\n");
    } else {
      EXPECT_EQ(value.rfind("refused: cancelled: the user ", 0), 0u) << value;
      EXPECT_NE(value.find("nothing was run"), std::string::npos) << value;
    }
  }
}

// A client that cannot be asked gets a clear refusal, never a silent run;
// functions not listed run without asking; a stray answer changes nothing.
TEST(McpApprovals, AClientWithoutElicitationIsRefusedNotRunSilently) {
  auto h = approving_harness(false);
  json::object r = h->call("execute", {{"code", kApprovedCode}});
  const std::string value(r.at("structuredContent").at("value").as_string());
  EXPECT_EQ(value.rfind("refused: invalid_request: codemode.fixture_greet needs the user's", 0), 0u)
      << value;
  h->raw(R"({"jsonrpc":"2.0","id":"corral-1","result":{"action":"accept"}})")->wait();
  json::object other = h->call(
      "execute", {{"code", "async () => (await codemode.fixture_fail({}).catch(e => 'x'))"}});
  EXPECT_EQ(other.at("structuredContent").at("value"), "x");
  // A direct call is the client's to approve: it runs.
  EXPECT_EQ(text_of(h->call("fixture_greet", {{"flags", {{"name", "direct"}}}})),
            "hello, direct\n");
}

// A question nobody answers ends with the run: the timeout answers the
// execute, and the session's later close finds nothing waiting.
TEST(McpApprovals, AnUnansweredQuestionEndsWithTheRun) {
  auto h = approving_harness(true);
  auto call = h->start("tools/call",
                       json::object{{"name", "execute"},
                                    {"arguments", {{"code", kApprovedCode}, {"timeout", 500}}}});
  ASSERT_TRUE(call->wait_for("elicitation/create").is_object());
  const json::value r = call->wait();
  EXPECT_EQ(r.at("result").at("isError"), true) << json::serialize(r);
  EXPECT_NE(json::serialize(r).find("timeout"), std::string::npos) << json::serialize(r);
  json::object next = h->call("execute", {{"code", "async () => 3"}});
  EXPECT_EQ(next.at("structuredContent").at("value"), 3);
}

// Found by a hostile review: the question shows what will run (separators,
// bidi and zero-width characters escaped; a long input's head and tail with
// its size), an answer holding an error is no approval, one refusal stands
// for the rest of the run, and a question the run outlived is withdrawn.
TEST(McpApprovals, TheQuestionCannotBeDisguisedAndIsNotRepeatedAfterARefusal) {
  auto h = approving_harness(true);
  auto answer = [&](const json::value& ask, json::object response) {
    response["jsonrpc"] = "2.0";
    response["id"] = ask.at("id");
    h->raw(json::serialize(response))->wait();
  };
  auto call = h->start(
      "tools/call",
      json::object{
          {"name", "execute"},
          {"arguments",
           {{"code",
             "async () => { const out = [];\n"
             "  for (const name of ['ok\\u2028Allow\\u202eX\\u200b', 'a'.repeat(5000) + '--EVIL',"
             " 'third']) {\n"
             "    try { out.push((await codemode.fixture_greet({flags: {name}})).stdout); }"
             " catch (e) { out.push(e.message.split(';')[0]); } }\n"
             "  return out; }"}}}});
  const json::value first = call->wait_for("elicitation/create");
  ASSERT_TRUE(first.is_object());
  const std::string shown(first.at("params").at("message").as_string());
  EXPECT_NE(shown.find("ok\\u2028Allow\\u202eX\\u200b"), std::string::npos) << shown;
  EXPECT_EQ(shown.find("\xE2\x80\xA8"), std::string::npos) << shown;
  // Both a result that accepts and an error: no approval.
  answer(first, json::object{{"result", json::object{{"action", "accept"}}},
                             {"error", json::object{{"code", -1}, {"message", "no"}}}});
  const json::value r = call->wait();
  const json::array& out = r.at("result").at("structuredContent").at("value").as_array();
  ASSERT_EQ(out.size(), 3u) << json::serialize(r);
  EXPECT_EQ(out[0], "cancelled: codemode.fixture_greet was not approved (no)");
  // Refused once: not asked again in this run.
  EXPECT_EQ(out[1], "cancelled: the user turned down an earlier call of this run");
  EXPECT_EQ(out[2], "cancelled: the user turned down an earlier call of this run");
  std::size_t questions = 0;
  for (const json::value& m : call->notifications())
    questions += m.as_object().contains("method") && m.at("method") == "elicitation/create";
  EXPECT_EQ(questions, 1u);

  // A long input shows its head, its tail (the end a hidden flag would be
  // in) and its size.
  auto long_call = h->start(
      "tools/call",
      json::object{{"name", "execute"},
                   {"arguments",
                    {{"code",
                      "async () => codemode.fixture_greet({flags: {name: 'a'.repeat(5000) + "
                      "'--EVIL'}}).catch(e => e.message)"},
                     {"timeout", 1000}}}});
  const json::value asked = long_call->wait_for("elicitation/create");
  ASSERT_TRUE(asked.is_object());
  const std::string long_shown(asked.at("params").at("message").as_string());
  EXPECT_NE(long_shown.find("--EVIL"), std::string::npos) << long_shown;
  EXPECT_NE(long_shown.find("5027 bytes in all; 4127 in the middle not shown"), std::string::npos)
      << long_shown;
  EXPECT_LT(long_shown.size(), 1400u);
  // Unanswered, the run times out and the question is withdrawn.
  long_call->wait();
  bool withdrawn = false;
  for (const json::value& m : long_call->notifications())
    withdrawn = withdrawn ||
                (m.as_object().contains("method") && m.at("method") == "notifications/cancelled" &&
                 m.at("params").at("requestId") == asked.at("id"));
  EXPECT_TRUE(withdrawn);
}

// A misspelt approval name would leave its function unasked: the service
// refuses to start instead, naming it.
TEST(McpApprovals, AnApprovalNamingNothingStopsTheStart) {
  pool::WorkerPool pool(test_pool_options());
  for (const char* name : {"codemode.fixture_greet", "fixture-greet", "greet", "nope.tool"}) {
    Options options;
    options.manifests = {fixture_manifest()};
    options.approve = {name};
    try {
      Service::start(std::move(options), pool)->shutdown();
      ADD_FAILURE() << name << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("approve names ") + name), std::string::npos)
          << e.what();
    }
  }
  pool.shutdown(std::chrono::seconds(1));
}

// An upstream server's own annotations count: code mode asks before a tool
// it marks `destructiveHint: true` (even one also claiming to be read-only)
// or `readOnlyHint: false` alone, and runs the read-only and unannotated ones
// without asking; a client that cannot be asked gets the refusal, and
// nothing runs.
TEST(McpApprovals, UpstreamToolsAnnotatedDestructiveAreAskedAbout) {
  const auto harness = [](bool elicits) {
    Options options;
    Upstream u;
    u.name = "annotated";
    u.command = {"/bin/sh",
                 std::string(CORRAL_SOURCE_DIR) + "/tests/mcp/fixtures/annotated_upstream.sh"};
    u.confinement = process::Confinement::none();  // the script is in the source tree
    options.upstreams = {u};
    return approving_harness(elicits, std::move(options));
  };
  constexpr const char* kCallAll =
      "async () => { const out = [];\n"
      "  for (const t of ['peek', 'plain', 'wipe', 'unsafe', 'both']) {\n"
      "    try { out.push(await codemode.annotated[t]({})); }\n"
      "    catch (e) { out.push(e.message.split(' ').slice(0, 2).join(' ')); } }\n"
      "  return out.map(r => typeof r === 'string' ? r : JSON.stringify(r)); }";

  auto h = harness(true);
  auto call = h->start("tools/call",
                       json::object{{"name", "execute"}, {"arguments", {{"code", kCallAll}}}});
  std::vector<std::string> asked_about;
  for (const char* action : {"accept", "accept", "decline"}) {
    const json::value ask = call->wait_for("elicitation/create", asked_about.size());
    ASSERT_TRUE(ask.is_object()) << action;
    asked_about.emplace_back(ask.at("params").at("message").as_string());
    h->raw(json::serialize(json::object{{"jsonrpc", "2.0"},
                                        {"id", ask.at("id")},
                                        {"result", json::object{{"action", action}}}}))
        ->wait();
  }
  const json::value r = call->wait();
  const std::string got = json::serialize(r.at("result").at("structuredContent").at("value"));
  ASSERT_EQ(asked_about.size(), 3u);
  EXPECT_NE(asked_about[0].find("codemode.annotated.wipe"), std::string::npos) << asked_about[0];
  EXPECT_NE(asked_about[1].find("codemode.annotated.unsafe"), std::string::npos) << asked_about[1];
  EXPECT_NE(asked_about[2].find("codemode.annotated.both"), std::string::npos) << asked_about[2];
  EXPECT_NE(got.find("ran peek"), std::string::npos) << got;
  EXPECT_NE(got.find("ran plain"), std::string::npos) << got;
  EXPECT_NE(got.find("ran wipe"), std::string::npos) << got;
  EXPECT_NE(got.find("ran unsafe"), std::string::npos) << got;
  EXPECT_EQ(got.find("ran both"), std::string::npos) << got;
  EXPECT_NE(got.find("cancelled: the"), std::string::npos) << got;

  auto silent = harness(false);
  const std::string refused = json::serialize(
      silent->call("execute", {{"code", kCallAll}}).at("structuredContent").at("value"));
  EXPECT_NE(refused.find("ran peek"), std::string::npos) << refused;
  EXPECT_NE(refused.find("ran plain"), std::string::npos) << refused;
  EXPECT_EQ(refused.find("ran wipe"), std::string::npos) << refused;
  EXPECT_EQ(refused.find("ran unsafe"), std::string::npos) << refused;
  EXPECT_EQ(refused.find("ran both"), std::string::npos) << refused;
  EXPECT_NE(refused.find("invalid_request: codemode.annotated.wipe"), std::string::npos) << refused;
}

// A call still running when its session closes is answered with the reason
// (here the shutdown's `unavailable`), then stopped: its tree is gone.
TEST(McpTools, ClosingASessionAnswersItsCallsInFlight) {
  Harness h;
  const std::string path = fifo(::testing::TempDir() + "/close_pids");
  auto call = h.start("tools/call", json::object{{"name", "fixture_spawn"},
                                                 {"arguments", {{"flags", {{"pids", path}}}}}});
  const std::vector<int> pids = read_pids(path);
  ASSERT_EQ(pids.size(), 3u);
  h.session().close(Failure{FailureCode::unavailable, "stopping for the test", nullptr});
  ASSERT_TRUE(call->finished()) << "answered at once, before the command is stopped";
  json::value r = call->wait();
  const json::object& result = r.at("result").as_object();
  EXPECT_EQ(result.at("isError"), true);
  const json::object failure = failure_of(result);
  EXPECT_EQ(failure.at("code"), "unavailable");
  EXPECT_EQ(failure.at("retryable"), true);
  EXPECT_EQ(failure.at("message"), "stopping for the test");
  h.service().shutdown();  // waits for the command's task
  for (int pid : pids) EXPECT_FALSE(alive(pid)) << pid;
}

TEST(McpTools, CompactModeOffersTheTrioWhateverTheNumberOfCommands) {
  Options options;
  options.mode = Mode::compact;
  Harness h(std::move(options));
  EXPECT_EQ(h.service().tool_names(),
            (std::vector<std::string>{"execute", "search_tools", "get_tool_details", "call_tool"}));
  json::object found = h.call("search_tools", {{"query", "greet"}});
  const json::array& tools = found.at("structuredContent").at("tools").as_array();
  ASSERT_EQ(tools.size(), 1u);
  EXPECT_EQ(tools[0].at("name").as_string(), "fixture_greet");
  json::object all = h.call("search_tools", {});
  EXPECT_EQ(all.at("structuredContent").at("total").to_number<int>(), 4);
  json::object details = h.call("get_tool_details", {{"name", "fixture_greet"}});
  EXPECT_EQ(details.at("structuredContent").at("annotations").at("title").as_string(),
            "Greet someone");
  EXPECT_TRUE(details.at("structuredContent").as_object().contains("inputSchema"));
  json::object ran = h.call(
      "call_tool", {{"name", "fixture_greet"}, {"input", {{"flags", {{"name", "compact"}}}}}});
  EXPECT_EQ(text_of(ran), "hello, compact\n");
  json::object missing = h.call("call_tool", {{"name", "nope"}});
  EXPECT_EQ(failure_of(missing).at("code").as_string(), "no_such_tool");
  // Code mode still reaches every command.
  json::object coded =
      h.call("execute", {{"code", "async () => (await codemode.fixture_greet({})).stdout"}});
  EXPECT_EQ(coded.at("structuredContent").at("value").as_string(), "hello, world\n");
}

// A manifest of `count` commands of /bin/echo (`name`_cmdN, three flags
// each), in a fresh folder that the returned guard removes.
struct GeneratedManifest {
  std::string dir, path;
  GeneratedManifest(int count, const std::string& name = "tool") {
    char tmp[] = "/tmp/corral-mcp-manifest-XXXXXX";
    EXPECT_NE(::mkdtemp(tmp), nullptr);
    dir = tmp;
    path = dir + "/tools.yaml";
    std::ofstream out(path);
    out << "corral: 1\nname: " << name
        << "\nexecutable: /bin/echo\nconfinement: host\ndescription: generated\ncommands:\n";
    for (int i = 0; i < count; ++i) {
      out << "  - name: cmd" << i << "\n    description: Command number " << i
          << " of the generated catalogue\n    flags:\n"
          << "      - {name: name, type: string, description: the name to act on}\n"
          << "      - {name: count, type: int, description: how many times}\n";
    }
  }
  ~GeneratedManifest() { std::filesystem::remove_all(dir); }
};

// Compact mode's description stays small whatever the catalogue, and code
// finds, reads and calls any of 1,000 commands from one execute.
TEST(McpTools, CompactModeCodeFindsAnyOfAThousandCommandsFromOneExecute) {
  GeneratedManifest manifest(1000);
  Options options;
  options.mode = Mode::compact;
  options.manifests = {manifest.path};
  Harness h(std::move(options));
  json::value listed = h.request("tools/list");
  const std::string description(
      listed.at("result").at("tools").at(0).at("description").as_string());
  EXPECT_LE(description.size(), 8192u);
  EXPECT_NE(description.find("search(query: string"), std::string::npos) << description;
  EXPECT_NE(description.find("1000 functions are bound"), std::string::npos) << description;
  EXPECT_EQ(description.find("tool_cmd999(input"), std::string::npos);

  json::object r = h.call(
      "execute",
      {{"code",
        "async () => {\n"
        "  const hits = await codemode.search('cmd737');\n"
        "  const page = await codemode.search({query: 'generated catalogue', limit: 100, offset: "
        "950});\n"
        "  const all = await codemode.search('');\n"
        "  const declaration: string = await codemode.describe(hits[0].name);\n"
        "  const ran = await codemode.tool_cmd737({flags: {name: 'x'}});\n"
        "  return {first: hits[0].name, pageSize: page.length, listed: all.length,\n"
        "          declares: declaration.includes('tool_cmd737(input: {'), out: ran.stdout};\n"
        "}"}});
  ASSERT_FALSE(r.contains("isError")) << json::serialize(r);
  const json::value& v = r.at("structuredContent").at("value");
  EXPECT_EQ(v.at("first").as_string(), "codemode.tool_cmd737");
  EXPECT_EQ(v.at("pageSize").to_number<int>(), 50);
  EXPECT_EQ(v.at("listed").to_number<int>(), 20);
  EXPECT_EQ(v.at("declares"), true);
  EXPECT_EQ(v.at("out").as_string(), "cmd737 --name=x --\n");

  // Ruby reaches them too, with keyword arguments.
  json::object ruby = h.call(
      "execute", {{"language", "ruby"}, {"code", "Codemode.search(query: 'cmd5', limit: 1)"}});
  ASSERT_FALSE(ruby.contains("isError")) << json::serialize(ruby);
  EXPECT_EQ(ruby.at("structuredContent").at("value").at(0).at("name").as_string(),
            "codemode.tool_cmd5");
}

// What the finders refuse is an Error the guest can catch, carrying a
// failure code, and the run goes on.
TEST(McpTools, CompactModeFindersRefuseBadInputWithACodeAndTheRunGoesOn) {
  Options options;
  options.mode = Mode::compact;
  Harness h(std::move(options));
  json::object r = h.call(
      "execute",
      {{"code",
        "async () => {\n"
        "  const caught = [];\n"
        "  for (const f of [() => codemode.search(5), () => codemode.search({query: 'x', nope: "
        "1}),\n"
        "                   () => codemode.search('q'.repeat(5000)), () => "
        "codemode.describe('nope'),\n"
        "                   () => codemode.describe({}), () => codemode.search({limit: -1}),\n"
        "                   () => codemode.search({limit: 0}),\n"
        "                   () => codemode.describe({name: 'codemode.fixture_greet', x: 1})]) {\n"
        "    try { await f(); caught.push('no error'); } catch (e) { "
        "caught.push(String(e.message).split(':')[0]); }\n"
        "  }\n"
        "  const found = await codemode.search('greet');\n"
        "  const own = [await codemode.describe('codemode.search'), await "
        "codemode.describe('describe')];\n"
        "  return {caught, found: found.map(h => h.name), own};\n"
        "}"}});
  ASSERT_FALSE(r.contains("isError")) << json::serialize(r);
  const json::value& value = r.at("structuredContent").at("value");
  EXPECT_EQ(json::serialize(value.at("caught")),
            R"(["invalid_request","invalid_request","invalid_request","no_such_tool",)"
            R"("invalid_request","invalid_request","invalid_request","invalid_request"])");
  EXPECT_EQ(json::serialize(value.at("found")), R"(["codemode.fixture_greet"])");
  // Found by a hostile review: describe did not know the finder's own two.
  const std::string search_declared(value.at("own").at(0).as_string());
  const std::string describe_declared(value.at("own").at(1).as_string());
  EXPECT_NE(search_declared.find("  search(query: string | {"), std::string::npos)
      << search_declared;
  EXPECT_NE(describe_declared.find("  describe(name: string): Promise<string>;"), std::string::npos)
      << describe_declared;
}

// A command that code mode would call codemode.search cannot hide the
// finder: compact mode refuses to start and says what to rename.
TEST(McpTools, CompactModeRefusesAToolNamedLikeAFinder) {
  GeneratedManifest manifest(1, "search");
  const std::string single = manifest.dir + "/single.yaml";
  std::ofstream(single) << "corral: 1\nname: describe\nexecutable: /bin/echo\n"
                           "confinement: host\ndescription: clashes\n";
  pool::WorkerPool pool(test_pool_options());
  Options clash;
  clash.mode = Mode::compact;
  clash.manifests = {single};
  try {
    Service::start(std::move(clash), pool);
    ADD_FAILURE() << "a command named describe started in compact mode";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("codemode.describe is corral's own"), std::string::npos)
        << e.what();
  }
  Options fine;
  fine.mode = Mode::compact;
  fine.manifests = {manifest.path};
  EXPECT_NO_THROW(Service::start(std::move(fine), pool)->shutdown());
  Options direct;
  direct.manifests = {single};
  EXPECT_NO_THROW(Service::start(std::move(direct), pool)->shutdown());
  pool.shutdown(std::chrono::seconds(1));
}

TEST(McpTools, Cli11TreesBecomeToolsLikeManifests) {
  CLI::App app{"A CLI11 program", "cli"};
  std::string name;
  app.add_subcommand("greet", "Greets from CLI11")->add_option("--name", name, "Who to greet");
  Options options;
  options.trees.push_back(bind::tree_from_cli11(
      app, std::string(CORRAL_SOURCE_DIR) + "/tests/mcp/fixtures/mcp_tool.sh"));
  Harness h(std::move(options));
  json::object r = h.call("cli_greet", {{"flags", {{"name", "cli11"}}}});
  EXPECT_EQ(text_of(r), "hello, cli11\n");
  EXPECT_NE(h.service().declarations().find("cli_greet(input:"), std::string::npos);
}

TEST(McpTools, BadConfigurationIsRefusedWithAClearError) {
  pool::WorkerPool pool(test_pool_options());
  Options missing;
  missing.manifests = {"/no/such/manifest.yaml"};
  EXPECT_THROW(Service::start(std::move(missing), pool), std::invalid_argument);
  Options twice;
  twice.manifests = {fixture_manifest(), fixture_manifest()};
  EXPECT_THROW(Service::start(std::move(twice), pool), std::invalid_argument);
  Options upstream;
  upstream.upstreams = {Upstream{"bad-name", {"true"}, "", {}, {}, {}, {}}};
  EXPECT_THROW(Service::start(std::move(upstream), pool), std::invalid_argument);
  Options dead;
  dead.upstreams = {Upstream{"dead", {"/no/such/program"}, "", {}, {}, {}, {}}};
  dead.upstream_timeout = std::chrono::seconds(5);
  EXPECT_THROW(Service::start(std::move(dead), pool), std::runtime_error);
  pool.shutdown(std::chrono::seconds(1));
}

}  // namespace
}  // namespace corral::mcp::testing
