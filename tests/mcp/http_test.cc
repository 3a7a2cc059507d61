// Streamable HTTP at /mcp on a real executor server: sessions, JSON and SSE
// answers, DNS-rebinding refusals, bearer tokens, bounds, malformed input.
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <thread>

#include "corral/server.hpp"
#include "mcp/http.hpp"
#include "mcp_test_util.hpp"

namespace corral::mcp::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

struct Reply {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  json::value json() const { return json::parse(body); }
};

class McpHttp {
 public:
  explicit McpHttp(HttpOptions http_options = {}, Options options = {},
                   std::vector<std::string> allowed_origins = {},
                   std::size_t max_connections = server::kMaxConnections) {
    server::Options so;
    so.port = 0;
    so.max_connections = max_connections;
    so.allowed_origins = std::move(allowed_origins);
    so.pool = test_pool_options();
    server_ = std::make_unique<server::Server>(std::move(so));
    server::Routes::add(*server_, HttpEndpoint::route([this] { return endpoint_; }, 1 << 20));
    if (options.manifests.empty()) options.manifests = {fixture_manifest()};
    service_ = Service::start(std::move(options), server_->pool());
    endpoint_ = std::make_shared<HttpEndpoint>(service_, std::move(http_options));
    server_->listen();
    port_ = server_->address().port;
  }
  ~McpHttp() {
    endpoint_->close();
    service_->shutdown();
    server_->close();
  }

  Reply send(http::verb verb, std::string body, std::map<std::string, std::string> headers = {}) {
    asio::io_context ioc;
    beast::tcp_stream stream(ioc);
    stream.expires_after(std::chrono::seconds(30));
    stream.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_));
    http::request<http::string_body> req{verb, "/mcp", 11};
    req.set(http::field::host, "127.0.0.1:" + std::to_string(port_));
    if (verb == http::verb::post) {
      req.set(http::field::content_type, "application/json");
      req.set(http::field::accept, "application/json, text/event-stream");
    }
    for (const auto& [k, v] : headers) req.set(k, v);
    req.body() = std::move(body);
    req.prepare_payload();
    http::write(stream, req);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    beast::error_code ec;
    http::read(stream, buffer, res, ec);
    Reply reply;
    reply.status = res.result_int();
    for (const auto& f : res) {
      std::string name(f.name_string());
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      reply.headers[name] = std::string(f.value());
    }
    reply.body = res.body();
    return reply;
  }
  Reply post(const std::string& body, std::map<std::string, std::string> headers = {}) {
    return send(http::verb::post, body, std::move(headers));
  }
  // initialize; returns the session id.
  std::string open() {
    Reply r = post(
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
    EXPECT_EQ(r.status, 200) << r.body;
    return r.headers["mcp-session-id"];
  }

  HttpEndpoint& endpoint() { return *endpoint_; }
  std::uint16_t port() const { return port_; }

 private:
  std::unique_ptr<server::Server> server_;
  std::shared_ptr<Service> service_;
  std::shared_ptr<HttpEndpoint> endpoint_;
  std::uint16_t port_ = 0;
};

// The messages of an SSE body.
std::vector<json::value> events(const std::string& body) {
  std::vector<json::value> out;
  std::size_t at = 0;
  while ((at = body.find("data: ", at)) != std::string::npos) {
    const auto end = body.find('\n', at);
    out.push_back(json::parse(body.substr(at + 6, end - at - 6)));
    at = end;
  }
  return out;
}

TEST(McpHttp, SessionsOpenAnswerAndEndWithDelete) {
  McpHttp h;
  const std::string id = h.open();
  ASSERT_EQ(id.size(), 32u);
  const std::map<std::string, std::string> session{{"Mcp-Session-Id", id},
                                                   {"MCP-Protocol-Version", "2025-06-18"}};
  EXPECT_EQ(h.post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", session).status,
            202);
  Reply list = h.post(R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})", session);
  EXPECT_EQ(list.status, 200);
  EXPECT_EQ(list.headers["content-type"], "application/json");
  EXPECT_EQ(list.json().at("result").at("tools").as_array().size(), 5u);
  // A call with a progress token streams its notifications, then the result.
  Reply call = h.post(
      R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fixture_greet","arguments":{},"_meta":{"progressToken":"t"}}})",
      session);
  EXPECT_EQ(call.headers["content-type"], "text/event-stream");
  auto messages = events(call.body);
  ASSERT_EQ(messages.size(), 2u) << call.body;
  EXPECT_EQ(messages[0].at("method").as_string(), "notifications/progress");
  EXPECT_EQ(messages[1].at("result").at("structuredContent").at("stdout").as_string(),
            "hello, world\n");
  // The 2025-03-26 header is accepted; an unknown one is not.
  EXPECT_EQ(h.post(R"({"jsonrpc":"2.0","id":4,"method":"ping"})",
                   {{"Mcp-Session-Id", id}, {"MCP-Protocol-Version", "2025-03-26"}})
                .status,
            200);
  EXPECT_EQ(h.post(R"({"jsonrpc":"2.0","id":4,"method":"ping"})",
                   {{"Mcp-Session-Id", id}, {"MCP-Protocol-Version", "1999-01-01"}})
                .status,
            400);
  EXPECT_EQ(h.send(http::verb::delete_, "", session).status, 200);
  EXPECT_EQ(h.post(R"({"jsonrpc":"2.0","id":5,"method":"ping"})", session).status, 404);
  EXPECT_EQ(h.endpoint().sessions(), 0u);
}

TEST(McpHttp, ForeignOriginsAndHostsAreRefused) {
  McpHttp h;
  const std::string init =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";
  EXPECT_EQ(h.post(init, {{"Origin", "http://evil.example"}}).status, 403);
  EXPECT_EQ(h.post(init, {{"Host", "evil.example:80"}}).status, 403);
  EXPECT_EQ(h.post(init, {{"Origin", "null"}}).status, 403);
  EXPECT_EQ(h.post(init, {{"Origin", "http://localhost:3000"}}).status, 200);
  EXPECT_EQ(h.post(init, {{"Host", "localhost:1234"}}).status, 200);
  EXPECT_EQ(h.post(init, {{"Origin", "http://[::1]:3000"}}).status, 200);

  // The hosts that once passed a prefix check, and other near misses:
  // refused before any session opens.
  EXPECT_EQ(h.endpoint().sessions(), 3u);
  for (const char* host : {"127.0.0.1.attacker.example", "127.0.0.1.attacker.example:80",
                           "localhost.attacker.example", "attacker.localhost"}) {
    Reply refused = h.post(init, {{"Host", host}});
    EXPECT_EQ(refused.status, 403) << host;
    EXPECT_NE(refused.body.find("is not allowed"), std::string::npos) << refused.body;
  }
  for (const char* host : {"127.1", "0x7f.1", "a@127.0.0.1", ""})
    EXPECT_EQ(h.post(init, {{"Host", host}}).status, 400) << host;
  EXPECT_EQ(h.endpoint().sessions(), 3u);

  McpHttp g({}, {}, {"https://app.example"});
  EXPECT_EQ(g.post(init, {{"Origin", "https://app.example"}}).status, 200);
  EXPECT_EQ(g.post(init, {{"Host", "app.example"}}).status, 200);
  EXPECT_EQ(g.post(init, {{"Origin", "https://other.example"}}).status, 403);
}

TEST(McpHttp, CorsPreflightIsAnsweredForAllowedOriginsOnly) {
  McpHttp h({}, {}, {"https://app.example"});
  const std::map<std::string, std::string> preflight = {
      {"Origin", "https://app.example"},
      {"Access-Control-Request-Method", "POST"},
      {"Access-Control-Request-Headers", "content-type, mcp-session-id"}};
  Reply allowed = h.send(http::verb::options, "", preflight);
  EXPECT_EQ(allowed.status, 204);
  EXPECT_EQ(allowed.headers["access-control-allow-origin"], "https://app.example");
  EXPECT_NE(allowed.headers["access-control-allow-methods"].find("POST"), std::string::npos);
  EXPECT_NE(allowed.headers["access-control-allow-headers"].find("Mcp-Session-Id"),
            std::string::npos);
  EXPECT_EQ(allowed.headers["vary"], "Origin");

  auto foreign = preflight;
  foreign["Origin"] = "https://evil.example";
  Reply refused = h.send(http::verb::options, "", foreign);
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(refused.headers.count("access-control-allow-origin"), 0u);

  // The answers themselves let the allowed page read them, and its session id.
  const std::string init =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";
  Reply opened = h.post(init, {{"Origin", "https://app.example"}});
  EXPECT_EQ(opened.status, 200);
  EXPECT_EQ(opened.headers["access-control-allow-origin"], "https://app.example");
  EXPECT_NE(opened.headers["access-control-expose-headers"].find("Mcp-Session-Id"),
            std::string::npos);
  // Without an Origin (a non-browser client) there are no CORS headers.
  Reply plain = h.post(init);
  EXPECT_EQ(plain.status, 200);
  EXPECT_EQ(plain.headers.count("access-control-allow-origin"), 0u);
  // An OPTIONS that is not a preflight is an unsupported method.
  EXPECT_EQ(h.send(http::verb::options, "").status, 405);
}

TEST(McpHttp, BearerTokensAreRequiredWhenTheServerHasOne) {
  HttpOptions options;
  options.identify = server::sync_identity([](const server::Handshake& h) {
    auto it = h.headers.find("authorization");
    return it != h.headers.end() && it->second == "Bearer sesame"
               ? server::Decision::admit("token-1")
               : server::Decision::refuse("no token");
  });
  McpHttp h(options);
  const std::string init =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";
  Reply refused = h.post(init);
  EXPECT_EQ(refused.status, 401);
  EXPECT_EQ(refused.headers["www-authenticate"], "Bearer");
  EXPECT_EQ(h.post(init, {{"Authorization", "Bearer wrong"}}).status, 401);
  EXPECT_EQ(h.post(init, {{"Authorization", "Bearer sesame"}}).status, 200);
}

TEST(McpHttp, AnIdentityHookMayDecideLaterAndOneThatNeverDecidesRefuses) {
  const std::string init =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";
  HttpOptions later;
  later.identify = [](const server::Handshake&, server::DecideCallback decide) {
    std::thread([decide] { decide(server::Decision::admit("later")); }).detach();
  };
  McpHttp a(later);
  EXPECT_EQ(a.post(init).status, 200);
  HttpOptions never;
  never.identify = [](const server::Handshake&, server::DecideCallback) {};
  McpHttp b(never);
  EXPECT_EQ(b.post(init).status, 401);
}

TEST(McpHttp, MalformedRequestsGetTypedErrorsAndTheServerStays) {
  McpHttp h;
  Reply parse = h.post("{nope");
  EXPECT_EQ(parse.status, 400);
  EXPECT_EQ(parse.json().at("error").at("code").to_number<int>(), kParseError);
  Reply batch = h.post(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])");
  EXPECT_EQ(batch.status, 400);
  EXPECT_EQ(batch.json().at("error").at("code").to_number<int>(), kInvalidRequest);
  EXPECT_EQ(h.post(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})").status, 400);  // no session
  EXPECT_EQ(
      h.post(R"({"jsonrpc":"2.0","id":1,"method":"ping"})", {{"Mcp-Session-Id", "nope"}}).status,
      404);
  EXPECT_EQ(h.post("{}", {{"Content-Type", "text/plain"}}).status, 415);
  EXPECT_EQ(h.post("{}", {{"Accept", "text/html"}}).status, 406);
  EXPECT_EQ(h.send(http::verb::put, "").status, 405);
  const std::string id = h.open();
  Reply invalid = h.post(R"({"jsonrpc":"2.0","method":7})", {{"Mcp-Session-Id", id}});
  EXPECT_EQ(invalid.status, 400);
  EXPECT_EQ(invalid.json().at("error").at("code").to_number<int>(), kInvalidRequest);
  EXPECT_EQ(h.post(R"({"jsonrpc":"2.0","id":9,"method":"ping"})", {{"Mcp-Session-Id", id}}).status,
            200);
}

TEST(McpHttp, OpenSessionsAreBounded) {
  HttpOptions options;
  options.max_sessions = 2;
  McpHttp h(options);
  const std::string a = h.open();
  h.open();
  const std::string init =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";
  EXPECT_EQ(h.post(init).status, 503);
  EXPECT_EQ(h.send(http::verb::delete_, "", {{"Mcp-Session-Id", a}}).status, 200);
  EXPECT_EQ(h.post(init).status, 200);
}

// A session exists only after its initialize succeeded: refused ones take
// no slot, so they cannot lock good clients out until the idle expiry.
// A GET stream lives as long as its session: it keeps its place under the
// server's max_connections for as long as it is open (it did not: the slot
// went when MCP took the connection over, so one session could hold any
// number of streams and descriptors).
TEST(McpHttp, OpenStreamsCountAgainstTheConnectionCap) {
  McpHttp h({}, {}, {}, /*max_connections=*/2);
  const std::string id = h.open();  // its connection closed with the answer
  asio::io_context ioc;
  auto open_stream = [&] {
    auto stream = std::make_unique<beast::tcp_stream>(ioc);
    stream->expires_after(std::chrono::seconds(30));
    stream->connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), h.port()));
    http::request<http::empty_body> req{http::verb::get, "/mcp", 11};
    req.set(http::field::host, "127.0.0.1:" + std::to_string(h.port()));
    req.set(http::field::accept, "text/event-stream");
    req.set("Mcp-Session-Id", id);
    req.set("MCP-Protocol-Version", "2025-06-18");
    http::write(*stream, req);
    beast::flat_buffer buffer;
    http::response_parser<http::empty_body> head;
    http::read_header(*stream, buffer, head);
    EXPECT_EQ(head.get().result_int(), 200);
    return stream;
  };
  auto first = open_stream();
  auto second = open_stream();
  // Both places are taken: the next connection is told the server is full.
  EXPECT_EQ(h.post(R"({"jsonrpc":"2.0","id":2,"method":"ping"})",
                   {{"Mcp-Session-Id", id}, {"MCP-Protocol-Version", "2025-06-18"}})
                .status,
            503);
  EXPECT_EQ(h.endpoint().sessions(), 1u);
}

TEST(McpHttp, AFailedInitializeTakesNoSessionSlot) {
  HttpOptions options;
  options.max_sessions = 2;
  McpHttp h(options);
  const std::vector<std::string> bad = {
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})",
      R"({"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":7}})",
      R"({"jsonrpc":"2.0","id":true,"method":"initialize","params":{"protocolVersion":"2025-06-18"}})",
      R"({"jsonrpc":"1.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-06-18"}})",
      R"({"jsonrpc":"2.0","id":4,"method":"initialize","params":[]})"};
  for (int round = 0; round < 3; ++round) {
    for (const std::string& body : bad) {
      Reply r = h.post(body);
      EXPECT_EQ(r.status, 400) << body << " " << r.body;
      EXPECT_EQ(r.headers.count("mcp-session-id"), 0u) << body;
      EXPECT_TRUE(r.json().as_object().contains("error")) << r.body;
    }
  }
  EXPECT_EQ(h.endpoint().sessions(), 0u);
  const std::string a = h.open();
  const std::string b = h.open();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_EQ(b.size(), 32u);
  EXPECT_EQ(h.endpoint().sessions(), 2u);
  EXPECT_EQ(h.post(bad[0]).status, 503);  // the bound still holds
}

// The endpoint closing (the server's drain) answers a call in flight with a
// retryable `unavailable` result on its own stream, instead of never.
TEST(McpHttp, ACallInFlightIsAnsweredWhenTheEndpointCloses) {
  McpHttp h;
  const std::string id = h.open();
  Fifo fifo;
  Reply reply;
  std::thread caller([&] {
    reply = h.post(
        R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fixture_spawn","arguments":{"flags":{"pids":")" +
            fifo.path() + R"("}}}})",
        {{"Mcp-Session-Id", id}});
  });
  EXPECT_EQ(fifo.pids().size(), 3u);  // the command runs
  h.endpoint().close();
  caller.join();
  EXPECT_EQ(reply.status, 200) << reply.body;
  const json::value answer = reply.json();
  EXPECT_EQ(answer.at("id"), 5);
  const json::object& result = answer.at("result").as_object();
  EXPECT_EQ(result.at("isError"), true);
  const json::value failure = json::parse(text_of(result));
  EXPECT_EQ(failure.at("code"), "unavailable") << reply.body;
  EXPECT_EQ(failure.at("retryable"), true);
  EXPECT_EQ(h.endpoint().sessions(), 0u);
}

}  // namespace
}  // namespace corral::mcp::testing
