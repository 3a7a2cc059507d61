// The instruments: what each counter and gauge counts, and that a double
// close never drives the connection gauge below zero.
#include "server/metrics.hpp"
#include "corral/client.hpp"
#include "server/server_test_util.hpp"

namespace corral::server::testing {
namespace {

bool has_line(const std::string& scrape, const std::string& line) {
  return scrape.find(line + "\n") != std::string::npos;
}

TEST(Metrics, CountConnectionsExecutionsByOutcomeAndToolCalls) {
  Options options = test_options();
  options.metrics = own_metrics();
  Server server(std::move(options));
  server.listen();
  {
    auto client =
        client::Client::connect("ws://127.0.0.1:" + std::to_string(server.address().port));
    EXPECT_TRUE(eventually(
        [&] { return has_line(server.render_metrics(), "corral_connections_active 1"); }));
    client::ExecuteRequest request = request_of("async () => (await codemode.one({})) + 1");
    request.tools = {{"one", "", ""}};
    EXPECT_TRUE(
        client->execute(request, [](const std::string&, const std::string&) { return "1"; }).ok());
    EXPECT_FALSE(client->execute(request_of("throw new Error('x')")).ok());
    EXPECT_FALSE(client->execute(request_of("syntax error here (")).ok());
  }
  EXPECT_TRUE(
      eventually([&] { return has_line(server.render_metrics(), "corral_connections_active 0"); }));
  const std::string scrape = server.render_metrics();
  EXPECT_TRUE(has_line(scrape, "corral_connections_total 1")) << scrape;
  EXPECT_TRUE(has_line(scrape, "corral_executions_total{outcome=\"ok\"} 1")) << scrape;
  EXPECT_TRUE(has_line(scrape, "corral_executions_total{outcome=\"guest_error\"} 1")) << scrape;
  EXPECT_TRUE(has_line(scrape, "corral_executions_total{outcome=\"compile_error\"} 1")) << scrape;
  EXPECT_TRUE(has_line(scrape, "corral_execution_duration_seconds_count 3")) << scrape;
  EXPECT_TRUE(has_line(scrape, "corral_tool_calls_total 1")) << scrape;
  EXPECT_TRUE(has_line(scrape, "corral_queue_depth 0")) << scrape;
}

TEST(Metrics, TheConnectionGaugeNeverGoesBelowZero) {
  Metrics metrics(true);
  metrics.connection_opened();
  metrics.connection_closed();
  metrics.connection_closed();
  EXPECT_EQ(metrics.connections_active(), 0u);
  EXPECT_TRUE(has_line(metrics.render({}), "corral_connections_active 0"));
}

TEST(Metrics, UninstrumentedCountsNothing) {
  Metrics metrics(false);
  metrics.connection_opened();
  metrics.connection_rejected();
  metrics.execution_finished(std::nullopt, 1);
  EXPECT_EQ(metrics.connections_active(), 0u);
  EXPECT_EQ(metrics.connection_rejections(), 0u);
  EXPECT_EQ(metrics.render({}), "");
}

TEST(Metrics, HistogramBucketsAreCumulative) {
  Metrics metrics(true);
  metrics.execution_finished(std::nullopt, 0.001);
  metrics.execution_finished(std::nullopt, 0.3);
  metrics.execution_finished(FailureCode::timeout, 100);
  const std::string scrape = metrics.render({});
  EXPECT_TRUE(has_line(scrape, "corral_execution_duration_seconds_bucket{le=\"0.005\"} 1"));
  EXPECT_TRUE(has_line(scrape, "corral_execution_duration_seconds_bucket{le=\"0.5\"} 2"));
  EXPECT_TRUE(has_line(scrape, "corral_execution_duration_seconds_bucket{le=\"30\"} 2"));
  EXPECT_TRUE(has_line(scrape, "corral_execution_duration_seconds_bucket{le=\"+Inf\"} 3"));
  EXPECT_TRUE(has_line(scrape, "corral_executions_total{outcome=\"timeout\"} 1"));
}

}  // namespace
}  // namespace corral::server::testing
