// The instruments: what each counter and gauge counts, and that a double
// close never drives the connection gauge below zero.
#include "server/metrics.hpp"

#include <signal.h>

#include <future>
#include <mutex>

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

// The pool's lifecycle is exported too: workers started, their exits by
// reason and the pool's refusals by reason, every reason present from the
// first scrape.
TEST(Metrics, CountWorkerExitsAndPoolRejectionsByReason) {
  Options options = test_options();
  options.metrics = own_metrics();
  options.pool.max_workers = 1;
  options.pool.max_queue = 1;
  Server server(std::move(options));
  server.listen();
  std::string scrape = server.render_metrics();
  for (const char* reason : {"retired", "memory_bound", "crashed", "hung", "protocol_error",
                             "start_failed", "shutdown"}) {
    EXPECT_TRUE(
        has_line(scrape, std::string("corral_worker_exits_total{reason=\"") + reason + "\"} 0"))
        << scrape;
  }
  EXPECT_TRUE(has_line(scrape, "corral_pool_rejections_total{reason=\"queue_overflow\"} 0"));
  EXPECT_TRUE(has_line(scrape, "corral_pool_rejections_total{reason=\"shutting_down\"} 0"));

  std::mutex mutex;
  int running_pid = 0;
  server.pool().subscribe([&](const pool::Event& event) {
    if (event.kind != pool::Event::Kind::execution_started) return;
    std::lock_guard lock(mutex);
    running_pid = event.pid;
  });
  // One run holds the only worker (its tool never answers), one waits, the
  // third is refused.
  std::promise<void> holding;
  pool::Request hold;
  hold.code = "async () => await codemode.wait({})";
  hold.tools = {"wait"};
  hold.limits.timeout = std::chrono::seconds(20);
  hold.dispatcher = [&](const std::string&, std::string, pool::ToolAnswer) { holding.set_value(); };
  std::promise<pool::Outcome> first, second;
  server.pool().submit(hold, [&](pool::Outcome o) { first.set_value(std::move(o)); });
  holding.get_future().get();
  pool::Request quick;
  quick.code = "async () => 1";
  quick.limits.timeout = std::chrono::seconds(20);
  server.pool().submit(quick, [&](pool::Outcome o) { second.set_value(std::move(o)); });
  pool::Outcome refused = server.pool().execute(quick);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.failure().code, FailureCode::queue_overflow);
  {
    std::lock_guard lock(mutex);
    ASSERT_GT(running_pid, 0);
    ASSERT_EQ(::kill(running_pid, SIGKILL), 0);
  }
  EXPECT_FALSE(first.get_future().get().ok());
  EXPECT_TRUE(second.get_future().get().ok());  // on the worker started after it

  scrape = server.render_metrics();
  EXPECT_TRUE(has_line(scrape, "corral_worker_exits_total{reason=\"crashed\"} 1")) << scrape;
  EXPECT_TRUE(has_line(scrape, "corral_pool_rejections_total{reason=\"queue_overflow\"} 1"))
      << scrape;
  EXPECT_TRUE(has_line(scrape, "corral_workers_started_total 2")) << scrape;
}

TEST(Metrics, TheConnectionGaugeFollowsOpensAndCloses) {
  Metrics metrics(true);
  for (int i = 0; i < 3; ++i) metrics.connection_opened();
  metrics.connection_closed();
  EXPECT_EQ(metrics.connections_active(), 2u);
  metrics.connection_closed();
  metrics.connection_closed();
  EXPECT_EQ(metrics.connections_active(), 0u);
  EXPECT_TRUE(has_line(metrics.render({}), "corral_connections_active 0"));
}

// A close without an open is a double close somewhere: debug builds (the
// sanitizer build in CI) stop on it rather than clamp it away.
TEST(MetricsDeathTest, ACloseWithoutAnOpenIsAsserted) {
#ifdef NDEBUG
  GTEST_SKIP() << "assertions are compiled out of this build";
#else
  Metrics metrics(true);
  EXPECT_DEATH(metrics.connection_closed(), "without a matching connection_opened");
#endif
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
