// The JSON-RPC and MCP lifecycle rules of a Session: negotiation, malformed
// input answered per JSON-RPC, batches refused, pagination, logging levels.
#include "mcp_test_util.hpp"

namespace corral::mcp::testing {
namespace {

json::object init_params(const char* revision) {
  return json::object{{"protocolVersion", revision},
                      {"capabilities", json::object{}},
                      {"clientInfo", json::object{{"name", "test"}, {"version", "1"}}}};
}

TEST(McpProtocol, NegotiatesEachSupportedRevisionAndOffersTheLatestOtherwise) {
  for (const char* revision : {"2025-11-25", "2025-06-18", "2025-03-26"}) {
    Harness h({}, false);
    json::value r = h.request("initialize", init_params(revision));
    EXPECT_EQ(r.at("result").at("protocolVersion").as_string(), revision);
    EXPECT_TRUE(r.at("result").at("capabilities").as_object().contains("tools"));
    EXPECT_TRUE(r.at("result").at("capabilities").as_object().contains("logging"));
  }
  Harness h({}, false);
  json::value r = h.request("initialize", init_params("1999-01-01"));
  EXPECT_EQ(r.at("result").at("protocolVersion").as_string(), "2025-11-25");
}

TEST(McpProtocol, MalformedInputGetsJsonRpcErrorsNeverACrash) {
  Harness h;
  auto code = [&](std::string_view text) {
    json::value r = h.raw(text)->wait();
    return r.is_null() ? 0 : r.at("error").at("code").to_number<int>();
  };
  EXPECT_EQ(code("{not json"), kParseError);
  EXPECT_EQ(code(""), kParseError);
  EXPECT_EQ(code("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]"), kInvalidRequest);
  EXPECT_EQ(code("[]"), kInvalidRequest);
  EXPECT_EQ(code("42"), kInvalidRequest);
  EXPECT_EQ(code(R"({"id":1,"method":"ping"})"), kInvalidRequest);
  EXPECT_EQ(code(R"({"jsonrpc":"1.0","id":1,"method":"ping"})"), kInvalidRequest);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":{"a":1},"method":"ping"})"), kInvalidRequest);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":1,"method":7})"), kInvalidRequest);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":1})"), kInvalidRequest);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":1,"method":"ping","params":[1]})"), kInvalidParams);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":1,"method":"no/such"})"), kMethodNotFound);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}})"), kInvalidParams);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}})"),
            kInvalidParams);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":1,"method":"tools/call",)"
                 R"("params":{"name":"execute","arguments":[1]}})"),
            kInvalidParams);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"x"}})"),
            kInvalidParams);
  // Notifications and responses get nothing back.
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","method":"notifications/whatever"})"), 0);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":5,"result":{}})"), 0);
  // The session still works.
  EXPECT_TRUE(h.request("ping").at("result").as_object().empty());
}

TEST(McpProtocol, RequestsBeforeInitializeAreRefusedButPingIsAnswered) {
  Harness h({}, false);
  EXPECT_TRUE(h.request("ping").as_object().contains("result"));
  json::value r = h.request("tools/list");
  EXPECT_EQ(r.at("error").at("code").to_number<int>(), kInvalidRequest);
}

TEST(McpProtocol, ToolsListPagesWithCursors) {
  Options options;
  options.page_size = 2;
  Harness h(std::move(options));
  std::vector<std::string> names;
  json::value cursor = nullptr;
  int pages = 0;
  do {
    json::object params;
    if (!cursor.is_null()) params["cursor"] = cursor;
    json::value r = h.request("tools/list", params);
    for (const auto& t : r.at("result").at("tools").as_array())
      names.emplace_back(t.at("name").as_string());
    const json::value* next = r.at("result").as_object().if_contains("nextCursor");
    cursor = next ? *next : json::value(nullptr);
    ++pages;
  } while (!cursor.is_null() && pages < 10);
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(names, h.service().tool_names());
  json::value bad = h.request("tools/list", json::object{{"cursor", "zzz"}});
  EXPECT_EQ(bad.at("error").at("code").to_number<int>(), kInvalidParams);
}

TEST(McpProtocol, LogNotificationsFollowTheLevelTheClientSet) {
  Harness h;
  auto quiet =
      h.start("tools/call", json::object{{"name", "execute"}, {"arguments", {{"code", "1 + 1"}}}});
  quiet->wait();
  EXPECT_TRUE(quiet->notifications().empty());
  EXPECT_TRUE(h.request("logging/setLevel", json::object{{"level", "debug"}})
                  .as_object()
                  .contains("result"));
  auto loud =
      h.start("tools/call", json::object{{"name", "execute"}, {"arguments", {{"code", "1 + 1"}}}});
  loud->wait();
  bool saw_log = false;
  for (const auto& n : loud->notifications())
    saw_log = saw_log || n.at("method").as_string() == "notifications/message";
  EXPECT_TRUE(saw_log);
}

TEST(McpProtocol, DuplicateRequestIdsInFlightAreRefused) {
  Harness h;
  auto first = h.start(
      "tools/call",
      json::object{{"name", "execute"},
                   {"arguments", {{"code", "async () => { while (true) {} }"}, {"timeout", 3000}}}},
      json::value("same"));
  auto second =
      h.start("tools/call", json::object{{"name", "execute"}, {"arguments", {{"code", "1"}}}},
              json::value("same"));
  EXPECT_EQ(second->wait().at("error").at("code").to_number<int>(), kInvalidRequest);
  h.notify("notifications/cancelled", json::object{{"requestId", "same"}});
  EXPECT_TRUE(first->wait().is_null());  // a cancelled request gets no response
}

}  // namespace
}  // namespace corral::mcp::testing
