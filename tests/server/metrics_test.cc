// The instruments: what each counter and gauge counts, and that a double
// close never drives the connection gauge below zero.
#include "server/metrics.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <future>
#include <mutex>
#include <regex>
#include <vector>

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
  const pool::Outcome after = second.get_future().get();  // on the worker started after it
  EXPECT_TRUE(after.ok()) << after.failure().message;

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
  metrics.execution_finished(FailureCode::timeout, 400);
  const std::string scrape = metrics.render({});
  EXPECT_TRUE(has_line(scrape, "corral_execution_duration_seconds_bucket{le=\"0.005\"} 1"));
  EXPECT_TRUE(has_line(scrape, "corral_execution_duration_seconds_bucket{le=\"0.5\"} 2"));
  EXPECT_TRUE(has_line(scrape, "corral_execution_duration_seconds_bucket{le=\"30\"} 2"));
  // Up to the longest timeout the daemon allows by default (5 minutes).
  EXPECT_TRUE(has_line(scrape, "corral_execution_duration_seconds_bucket{le=\"60\"} 2"));
  EXPECT_TRUE(has_line(scrape, "corral_execution_duration_seconds_bucket{le=\"120\"} 3"));
  EXPECT_TRUE(has_line(scrape, "corral_execution_duration_seconds_bucket{le=\"300\"} 3"));
  EXPECT_TRUE(has_line(scrape, "corral_execution_duration_seconds_bucket{le=\"+Inf\"} 4"));
  EXPECT_TRUE(has_line(scrape, "corral_executions_total{outcome=\"timeout\"} 2"));
}

// The value of the first sample of `name` (a line "name value").
double sample(const std::string& scrape, const std::string& name) {
  const std::size_t at = scrape.find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::stod(scrape.substr(at + name.size() + 2));
}

// What a capacity alert or an autoscaler divides by, how long runs waited
// for a slot, the build, and the process series every exporter has.
TEST(Metrics, CapacityQueueWaitBuildAndProcess) {
  Options options = test_options();
  options.metrics = own_metrics();
  options.pool.max_workers = 2;
  options.pool.executions_per_worker = 3;
  options.pool.max_queue = 7;
  Server server(std::move(options));
  server.listen();
  auto client = client::Client::connect("ws://127.0.0.1:" + std::to_string(server.address().port));
  ASSERT_TRUE(client->execute(request_of("1")).ok());
  ASSERT_TRUE(client->execute(request_of("2")).ok());
  const std::string scrape = server.render_metrics();
  EXPECT_TRUE(has_line(scrape, "corral_execution_slots 6")) << scrape;
  EXPECT_TRUE(has_line(scrape, "corral_queue_capacity 7")) << scrape;
  EXPECT_TRUE(has_line(scrape, "corral_queue_wait_seconds_count 2")) << scrape;
  EXPECT_TRUE(has_line(scrape, "corral_queue_wait_seconds_bucket{le=\"+Inf\"} 2")) << scrape;
  EXPECT_TRUE(has_line(scrape, "# TYPE corral_queue_wait_seconds histogram")) << scrape;
  EXPECT_TRUE(std::regex_search(
      scrape, std::regex("\ncorral_build_info\\{version=\"[0-9]+\\.[0-9]+\\.[0-9]+\"\\} 1\n")))
      << scrape;

  // CPU counts in clock ticks: this process may not have spent one yet.
  EXPECT_GE(sample(scrape, "process_cpu_seconds_total"), 0);
  EXPECT_GT(sample(scrape, "process_resident_memory_bytes"), 1 << 20);
  EXPECT_GT(sample(scrape, "process_virtual_memory_bytes"),
            sample(scrape, "process_resident_memory_bytes"));
  const double fds = sample(scrape, "process_open_fds");
  EXPECT_GE(fds, 3);  // stdio, the listener, the client's socket, ...
  rlimit limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
  EXPECT_EQ(sample(scrape, "process_max_fds"), static_cast<double>(limit.rlim_cur));
  const double started = sample(scrape, "process_start_time_seconds");
  const double now = static_cast<double>(::time(nullptr));
  EXPECT_LE(started, now + 1);
  EXPECT_GT(started, now - 24 * 3600) << "this test process started within a day";
  // 64 more open descriptors show (the server's threads may open or close
  // one or two meanwhile).
  std::vector<int> extra;
  for (int i = 0; i < 64; ++i) extra.push_back(::dup(0));
  const double more = sample(server.render_metrics(), "process_open_fds") - fds;
  EXPECT_GE(more, 60);
  EXPECT_LE(more, 68);
  for (int fd : extra) ::close(fd);
}

// Options::on_execution: one record per answered execute, with who asked,
// which request, where it ran and what it took.
TEST(Metrics, EachAnsweredExecutionIsRecordedOnce) {
  Options options = test_options();
  std::mutex mutex;
  std::vector<ExecutionRecord> records;
  options.on_execution = [&](const ExecutionRecord& record) {
    std::lock_guard lock(mutex);
    records.push_back(record);
  };
  Server server(std::move(options));
  server.listen();
  {
    auto client =
        client::Client::connect("ws://127.0.0.1:" + std::to_string(server.address().port));
    client::ExecuteRequest request =
        request_of("async () => { console.log('hi'); return (await codemode.one({})) + 1 }");
    request.tools = {{"one", "", ""}};
    ASSERT_TRUE(
        client->execute(request, [](const std::string&, const std::string&) { return "1"; }).ok());
    client::ExecuteRequest typed = request_of("const no: string = 'no'; throw new Error(no)");
    typed.language = Language::typescript;
    EXPECT_FALSE(client->execute(typed).ok());
  }
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock(mutex);
    return records.size() == 2;
  }));
  std::lock_guard lock(mutex);
  const ExecutionRecord& ok = records[0];
  EXPECT_EQ(ok.identity, "anonymous");
  EXPECT_EQ(ok.language, "javascript");
  EXPECT_FALSE(ok.failure);
  EXPECT_EQ(ok.tool_calls, 1u);
  EXPECT_EQ(ok.output_bytes, 3u);  // "hi\n"
  EXPECT_GE(ok.worker, 1u);
  EXPECT_GE(ok.queue_seconds, 0);
  EXPECT_GT(ok.run_seconds, 0);
  EXPECT_GE(ok.seconds, ok.run_seconds);
  EXPECT_GT(ok.response_bytes, 0u);
  const ExecutionRecord& failed = records[1];
  EXPECT_EQ(failed.language, "typescript");
  EXPECT_EQ(failed.failure, FailureCode::guest_error);
  EXPECT_GE(failed.worker, 1u);
  EXPECT_NE(failed.id, ok.id);
}

}  // namespace
}  // namespace corral::server::testing
