// Health, readiness and the scrape, over real HTTP.
#include "server/server_test_util.hpp"

namespace corral::server::testing {
namespace {

TEST(Probes, AnswerGetAndHeadAndMatchPathsBeforeTheQuery) {
  Server server(test_options());
  server.listen();
  const std::uint16_t port = server.address().port;

  HttpReply health = http_request(port, http::verb::get, "/healthz");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "ok");
  HttpReply ready = http_request(port, http::verb::get, "/readyz");
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(ready.body, "ready");
  HttpReply query = http_request(port, http::verb::get, "/readyz?probe=k8s");
  EXPECT_EQ(query.status, 200);
  EXPECT_EQ(query.body, "ready");
  HttpReply head = http_request(port, http::verb::head, "/healthz");
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.body, "");
  EXPECT_EQ(head.headers["Content-Length"], "2");
  // No metrics source configured: 404, not an empty scrape.
  HttpReply metrics = http_request(port, http::verb::get, "/metrics");
  EXPECT_EQ(metrics.status, 404);
  EXPECT_EQ(metrics.body, "not found");
  for (http::verb verb : {http::verb::post, http::verb::put, http::verb::delete_,
                          http::verb::options, http::verb::patch}) {
    HttpReply other = http_request(port, verb, "/healthz");
    EXPECT_EQ(other.status, 404) << http::to_string(verb);
    EXPECT_EQ(other.body, "not found");
  }
  EXPECT_EQ(http_request(port, http::verb::get, "/nothing").status, 404);
  EXPECT_EQ(http_request(port, http::verb::get, "/healthz/x").status, 404);
}

TEST(Probes, ReadinessFollowsTheAcceptanceFlagAtOnce) {
  Server server(test_options());
  server.listen();
  const std::uint16_t port = server.address().port;
  server.stop_accepting();
  HttpReply ready = http_request(port, http::verb::get, "/readyz");
  EXPECT_EQ(ready.status, 503);
  EXPECT_EQ(ready.body, "not ready");
  EXPECT_EQ(http_request(port, http::verb::get, "/healthz").status, 200);
  server.resume_accepting();
  EXPECT_EQ(http_request(port, http::verb::get, "/readyz").status, 200);
}

TEST(Probes, KeepAliveServesSeveralRequestsOnOneConnection) {
  Server server(test_options());
  server.listen();
  asio::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), server.address().port));
  bound_reads(socket.native_handle());
  beast::flat_buffer buffer;
  for (const char* target : {"/healthz", "/readyz?x=1", "/healthz"}) {
    http::request<http::empty_body> request(http::verb::get, target, 11);
    request.set(http::field::host, "127.0.0.1");
    http::write(socket, request);
    http::response<http::string_body> response;
    http::read(socket, buffer, response);
    EXPECT_EQ(response.result_int(), 200);
    EXPECT_TRUE(response.keep_alive());
  }
}

TEST(Probes, AnIdleKeepAliveConnectionClosesAfterTheKeepAliveTimeout) {
  Options options = test_options();
  options.keep_alive_timeout = std::chrono::milliseconds(200);
  Server server(std::move(options));
  server.listen();
  asio::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), server.address().port));
  bound_reads(socket.native_handle());
  http::request<http::empty_body> request(http::verb::get, "/healthz", 11);
  request.set(http::field::host, "127.0.0.1");
  http::write(socket, request);
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  http::read(socket, buffer, response);
  const auto answered = std::chrono::steady_clock::now();
  char byte;
  beast::error_code ec;
  socket.read_some(asio::buffer(&byte, 1), ec);
  EXPECT_EQ(ec, asio::error::eof);
  EXPECT_GE(std::chrono::steady_clock::now() - answered, std::chrono::milliseconds(150));
}

TEST(Probes, IncompleteHeadersAreCutAtTheHeadersTimeout) {
  Options options = test_options();
  options.headers_timeout = std::chrono::milliseconds(200);
  Server server(std::move(options));
  server.listen();
  asio::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), server.address().port));
  bound_reads(socket.native_handle());
  asio::write(socket, asio::buffer(std::string("GET /healthz HTTP/1.1\r\nHost: x\r\n")));
  char byte;
  beast::error_code ec;
  socket.read_some(asio::buffer(&byte, 1), ec);
  EXPECT_EQ(ec, asio::error::eof);
}

// The seed's 72 s keep-alive stays; the head timeout is its own, shorter
// bound (issue 14: a drip-fed upgrade was held 74 s).
TEST(Probes, DefaultTimeoutsAndCaps) {
  Options options;
  EXPECT_EQ(options.keep_alive_timeout, std::chrono::milliseconds(72'000));
  EXPECT_EQ(options.headers_timeout, std::chrono::milliseconds(10'000));
  EXPECT_EQ(options.idle_timeout, std::chrono::milliseconds(30'000));
  EXPECT_EQ(options.max_connections, 1024u);
  EXPECT_EQ(options.max_connections_per_address, 0u);
  EXPECT_EQ(options.ping_interval, std::chrono::milliseconds(30'000));
}

TEST(Probes, MetricsAreServedInTheTextFormatWhenASourceIsConfigured) {
  Options options = test_options();
  options.metrics = own_metrics();
  Server server(std::move(options));
  server.listen();
  HttpReply scrape = http_request(server.address().port, http::verb::get, "/metrics?name[]=x");
  EXPECT_EQ(scrape.status, 200);
  EXPECT_EQ(scrape.headers["Content-Type"], kPrometheusContentType);
  for (const char* family :
       {"# TYPE corral_connections_active gauge",
        "# TYPE corral_connection_rejections_total counter",
        "# TYPE corral_executions_total counter", "corral_executions_total{outcome=\"ok\"} 0",
        "corral_executions_total{outcome=\"timeout\"} 0",
        "# TYPE corral_execution_duration_seconds histogram",
        "corral_execution_duration_seconds_bucket{le=\"+Inf\"} 0",
        "# TYPE corral_queue_depth gauge", "# TYPE corral_workers_live gauge",
        "# TYPE corral_tool_calls_total counter"}) {
    EXPECT_NE(scrape.body.find(family), std::string::npos) << family;
  }
  EXPECT_EQ(http_request(server.address().port, http::verb::head, "/metrics").body, "");
}

TEST(Probes, ASourceThatFailsAnswers500MetricsUnavailable) {
  LogSink log;
  Options options = test_options();
  options.logger = log.logger();
  options.metrics = MetricsSource{"text/plain", [](const std::string&) -> std::string {
                                    throw std::runtime_error("collector down");
                                  }};
  Server server(std::move(options));
  server.listen();
  HttpReply scrape = http_request(server.address().port, http::verb::get, "/metrics");
  EXPECT_EQ(scrape.status, 500);
  EXPECT_EQ(scrape.body, "metrics unavailable");
  EXPECT_TRUE(log.wait_for("collector down"));
}

TEST(Probes, ASourceComposesWithTheOwnInstruments) {
  Options options = test_options();
  options.metrics = MetricsSource{"text/plain; version=0.0.4",
                                  [](const std::string& own) { return own + "extra_metric 1\n"; }};
  Server server(std::move(options));
  server.listen();
  HttpReply scrape = http_request(server.address().port, http::verb::get, "/metrics");
  EXPECT_NE(scrape.body.find("corral_workers_live"), std::string::npos);
  EXPECT_NE(scrape.body.find("extra_metric 1\n"), std::string::npos);
}

TEST(Probes, UninstrumentedServersServeAnEmptyOwnScrape) {
  Options options = test_options();
  options.metrics = own_metrics();
  options.instrumented = false;
  Server server(std::move(options));
  server.listen();
  {
    RawSocket socket(server.address().port);
    socket.call(1, "execute", execute_params("1 + 1"));
  }
  HttpReply scrape = http_request(server.address().port, http::verb::get, "/metrics");
  EXPECT_EQ(scrape.status, 200);
  EXPECT_EQ(scrape.body, "");
  EXPECT_EQ(server.render_metrics(), "");
}

}  // namespace
}  // namespace corral::server::testing
