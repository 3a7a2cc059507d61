// jsonrpc::decode and jsonrpc::Id (src/core/jsonrpc.hpp) without a socket: ids come
// back byte for byte, and a table of hostile messages each gets the answer
// (or the silence) JSON-RPC 2.0 asks for.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/jsonrpc.hpp"

namespace corral::core::jsonrpc {
namespace {

using Kind = Incoming::Kind;

// Concatenation by appending (GCC 12 at -O3 warns falsely, -Wrestrict, on
// "literal" + std::string).
std::string cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view part : parts) out += part;
  return out;
}

std::string quoted(const std::string& text) { return cat({"\"", text, "\""}); }

// The "id" member's text in a message the builders wrote (they write it
// right after "jsonrpc").
std::string written_id(const std::string& message) {
  const std::string prefix = R"({"jsonrpc":"2.0","id":)";
  EXPECT_EQ(message.rfind(prefix, 0), 0u) << message;
  const std::size_t at = prefix.size();
  const std::size_t end = message.find(",\"", at);
  return message.substr(at, end - at);
}

TEST(RpcIds, RoundTripByteExact) {
  const std::vector<std::string> ids = {
      "123456789012345678901234567890",
      "1e2",
      "-0",
      "1.50",
      "0",
      "-12",
      "1E+2",
      "1e400",
      "18446744073709551616",
      "-9223372036854775809",
      "0.1000000000000000000000000001",
      quoted(std::string(5000, 'x')),
      R"("\u0041\n\"quoted\"\/")",
      R"("\ud83d\ude00 and 😀")",
      R"("")",
      "null",
  };
  for (const std::string& token : ids) {
    for (const std::string& spacing : {std::string(), std::string(" \n\t")}) {
      const std::string request = cat({R"({"jsonrpc":"2.0","id":)", spacing, token, spacing,
                                       R"(,"method":"protocolVersion"})"});
      const Incoming in = decode(request);
      ASSERT_EQ(in.kind, Kind::request) << request;
      EXPECT_EQ(in.id.text(), token);
      EXPECT_EQ(written_id(result_message(in.id, json::value("corral-executor/1"))), token);
      EXPECT_EQ(written_id(error_message(in.id, kMethodNotFound, "no")), token);
      // The answers are JSON, and read back as the same id value.
      const json::value answer = json::parse(result_message(in.id, json::value(1)));
      EXPECT_EQ(json::serialize(answer.at("id")), json::serialize(in.id.value()));
    }
  }
}

TEST(RpcIds, TheValueOverloadsStillRenderAsBefore) {
  // An id the json::value overloads render the same way writes the same bytes.
  for (const json::value& id : {json::value(7), json::value("c1"), json::value(nullptr)}) {
    EXPECT_EQ(result_message(Id(id), json::value("x")), result_message(id, json::value("x")));
    EXPECT_EQ(error_message(Id(id), kInvalidRequest, "m"), error_message(id, kInvalidRequest, "m"));
  }
  // The value overload re-renders: why Id exists.
  const json::value big = json::parse("123456789012345678901234567890");
  EXPECT_NE(written_id(result_message(big, json::value(1))), "123456789012345678901234567890");
}

TEST(RpcIds, FromTokenTakesOneScalarTokenOnly) {
  EXPECT_EQ(Id::from_token("1.50")->text(), "1.50");
  EXPECT_TRUE(Id::from_token("\"a\"")->is_string());
  EXPECT_TRUE(Id::from_token("null")->is_null());
  EXPECT_TRUE(Id::from_token("-0")->is_number());
  for (const char* bad : {"", " 1", "1 ", "{}", "[]", "true", "01", "\"a", "1,2", "NaN"}) {
    EXPECT_FALSE(Id::from_token(bad)) << bad;
  }
  EXPECT_TRUE(Id().is_null());
  EXPECT_EQ(Id(json::value(json::object{})).text(), "null");
}

TEST(RpcDecode, RequestsAndResponses) {
  Incoming in = decode(R"({"jsonrpc":"2.0","id":3,"method":"execute","params":{"code":"1"}})");
  ASSERT_EQ(in.kind, Kind::request);
  EXPECT_EQ(in.method, "execute");
  ASSERT_TRUE(in.params);
  EXPECT_EQ(in.params->at("code"), "1");

  in = decode(R"({"jsonrpc":"2.0","id":3,"method":"protocolVersion"})");
  ASSERT_EQ(in.kind, Kind::request);
  EXPECT_FALSE(in.params);

  in = decode(R"({"jsonrpc":"2.0","id":"c1","result":{"sum":3}})");
  ASSERT_EQ(in.kind, Kind::response);
  EXPECT_EQ(in.id.text(), "\"c1\"");
  EXPECT_EQ(in.result.at("sum"), 3);
  EXPECT_FALSE(in.error);

  in = decode(R"({"jsonrpc":"2.0","id":"c2","error":{"code":-1,"message":"no"}})");
  ASSERT_EQ(in.kind, Kind::response);
  ASSERT_TRUE(in.error);
  EXPECT_EQ(in.error->at("message"), "no");

  in = decode(R"({"jsonrpc":"2.0","id":"c3","result":null,"error":{"message":"both"}})");
  ASSERT_EQ(in.kind, Kind::response);
  ASSERT_TRUE(in.error);  // error wins

  // A notification: nothing to answer.
  in = decode(R"({"jsonrpc":"2.0","method":"execute","params":{"code":"1"}})");
  EXPECT_EQ(in.kind, Kind::ignore);
  EXPECT_TRUE(in.reply.empty());

  // The key "id" escaped is still the key id (keys compare unescaped).
  in = decode(R"({"jsonrpc":"2.0","\u0069d":1.50,"method":"protocolVersion"})");
  ASSERT_EQ(in.kind, Kind::request);
  EXPECT_EQ(in.id.text(), "1.50");

  // Unknown members are allowed, also nested ids in params.
  in = decode(R"({"x":{"id":9},"jsonrpc":"2.0","method":"m","id":"top","params":[{"id":1}]})");
  ASSERT_EQ(in.kind, Kind::request);
  EXPECT_EQ(in.id.text(), "\"top\"");
}

// A literal's bytes, NULs included.
template <std::size_t N>
std::string bytes(const char (&text)[N]) {
  return std::string(text, N - 1);
}

struct Row {
  std::string text;
  int code;             // the JSON-RPC error code of the reply
  std::string id;       // the reply's id text
  std::string message;  // a part of the reply's message
};

TEST(RpcDecode, HostileMessagesGetTheirTypedReply) {
  const std::string deep_array = std::string(200, '[') + std::string(200, ']');
  std::string deep_params = R"({"jsonrpc":"2.0","id":1,"method":"execute","params":)";
  for (int i = 0; i < 300; ++i) deep_params += R"({"a":)";
  deep_params += "1";
  deep_params += std::string(301, '}');
  const std::vector<Row> table = {
      {"", kParseError, "null", "Parse error"},
      {"   ", kParseError, "null", "Parse error"},
      {"{not json", kParseError, "null", "Parse error"},
      {bytes("{\"jsonrpc\":\"2.0\",\0\"id\":1}"), kParseError, "null", "Parse error"},
      {bytes("{\"jsonrpc\":\"2.0\",\"id\":\"a\0b\",\"method\":\"m\"}"), kParseError, "null",
       "Parse error"},
      {"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"m\"}", kParseError, "null",
       "Parse error"},
      {"{\"jsonrpc\":\"2.0\",\"id\":\"\xc0\xaf\",\"method\":\"m\"}", kParseError, "null",
       "Parse error"},
      {R"({"jsonrpc":"2.0","id":1,"method":"m"} {})", kParseError, "null", "Parse error"},
      {deep_array, kParseError, "null", "too deep"},
      {deep_params, kParseError, "null", "too deep"},
      {"[]", kInvalidRequest, "null", "Batches are not supported"},
      {R"([{"jsonrpc":"2.0","id":1,"method":"protocolVersion"}])", kInvalidRequest, "null",
       "Batches"},
      {"5", kInvalidRequest, "null", "not a JSON-RPC 2.0 message"},
      {"\"x\"", kInvalidRequest, "null", "not a JSON-RPC 2.0 message"},
      {"null", kInvalidRequest, "null", "not a JSON-RPC 2.0 message"},
      {"{}", kInvalidRequest, "null", "not a JSON-RPC 2.0 message"},
      {R"({"jsonrpc":"1.0","id":1,"method":"execute"})", kInvalidRequest, "1", "JSON-RPC 2.0"},
      {R"({"jsonrpc":2,"id":"a","method":"execute"})", kInvalidRequest, "\"a\"", "JSON-RPC 2.0"},
      {R"({"id":1e2,"method":"execute"})", kInvalidRequest, "1e2", "JSON-RPC 2.0"},
      {R"({"jsonrpc":"2.0","id":{},"method":"execute"})", kInvalidRequest, "null",
       "id must be a string, a number or null"},
      {R"({"jsonrpc":"2.0","id":[1],"method":"execute"})", kInvalidRequest, "null", "id must be"},
      {R"({"jsonrpc":"2.0","id":true,"method":"execute"})", kInvalidRequest, "null", "id must be"},
      {R"({"jsonrpc":"2.0","id":1,"method":5})", kInvalidRequest, "1", "method must be a string"},
      {R"({"jsonrpc":"2.0","method":null})", kInvalidRequest, "null", "method must be a string"},
      {R"({"jsonrpc":"2.0","id":1,"method":"execute","params":5})", kInvalidRequest, "1",
       "params must be an object or an array"},
      {R"({"jsonrpc":"2.0","id":1,"method":"execute","params":"x"})", kInvalidRequest, "1",
       "params must be"},
      {R"({"jsonrpc":"2.0","id":1,"method":"execute","params":null})", kInvalidRequest, "1",
       "params must be"},
      {R"({"jsonrpc":"2.0","id":1,"id":2,"method":"m"})", kInvalidRequest, "null",
       "\"id\" appears more than once"},
      {R"({"jsonrpc":"2.0","id":1,"\u0069d":2,"method":"m"})", kInvalidRequest, "null",
       "\"id\" appears more than once"},
      {R"({"jsonrpc":"2.0","id":1,"method":"m","method":"execute"})", kInvalidRequest, "null",
       "\"method\" appears more than once"},
      {R"({"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"m"})", kInvalidRequest, "null",
       "\"jsonrpc\""},
      {R"({"jsonrpc":"2.0","id":1})", kInvalidRequest, "1", "neither a request nor a response"},
      {R"({"jsonrpc":"2.0","result":1})", kInvalidRequest, "null", "neither"},
      {R"({"jsonrpc":"2.0","id":123456789012345678901234567890})", kInvalidRequest,
       "123456789012345678901234567890", "neither"},
  };
  for (const Row& row : table) {
    const Incoming in = decode(row.text);
    ASSERT_EQ(in.kind, Kind::reply) << row.text;
    const json::value reply = json::parse(in.reply);
    EXPECT_EQ(reply.at("jsonrpc"), "2.0");
    EXPECT_EQ(reply.at("error").at("code"), row.code) << row.text << " -> " << in.reply;
    EXPECT_EQ(written_id(in.reply), row.id) << row.text << " -> " << in.reply;
    EXPECT_NE(std::string(reply.at("error").at("message").as_string()).find(row.message),
              std::string::npos)
        << row.text << " -> " << in.reply;
    EXPECT_EQ(reply.at("error").at("data").at("code"), "invalid_request");
  }
}

TEST(RpcDecode, ANotificationWithABadShapeIsStillIgnoredOrRefused) {
  // Without an id the peer cannot match an answer; JSON-RPC answers an
  // invalid one anyway (id null), and a valid one never.
  EXPECT_EQ(decode(R"({"jsonrpc":"2.0","method":"tool.call"})").kind, Kind::ignore);
  EXPECT_EQ(decode(R"({"jsonrpc":"2.0","method":"m","params":7})").kind, Kind::ignore);
  EXPECT_EQ(decode(R"({"jsonrpc":"2.0","method":7})").kind, Kind::reply);
}

TEST(RpcDecode, LargeInputsDecodeInOnePass) {
  // A long string id and a wide params object: linear, and exact.
  const std::string id = quoted(std::string(1 << 20, 'i'));
  std::string params = "[";
  for (int i = 0; i < 100000; ++i) params += R"({"id":1},)";
  params += "0]";
  const Incoming in =
      decode(cat({R"({"jsonrpc":"2.0","params":)", params, R"(,"method":"m","id":)", id, "}"}));
  ASSERT_EQ(in.kind, Kind::request);
  EXPECT_EQ(in.id.text(), id);
  EXPECT_EQ(in.params->as_array().size(), 100001u);
}

}  // namespace
}  // namespace corral::core::jsonrpc
