// tests/mcp/status_test.cc: what operators see (Service::status_json and
// metrics) of bound commands' slots and upstream servers, the held-slot tool
// error, and stdio upstreams' environment and restarts. Real processes: the
// fixture program, real `corral worker`s, a shell upstream server.
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <thread>

#include "corral/bind.hpp"
#include "mcp/upstream.hpp"
#include "mcp_test_util.hpp"
#include "process/faults.hpp"

namespace corral::mcp::testing {
namespace {

using namespace std::chrono_literals;

// Polls `condition` (a state only visible through a snapshot) for `limit`.
template <typename F>
bool eventually(F condition, std::chrono::milliseconds limit = 10s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (condition()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return condition();
}

int open_fds() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

json::object status_of(Service& service) { return json::parse(service.status_json()).as_object(); }

const json::object* entry(const json::object& status, const char* list, std::string_view name) {
  for (const auto& e : status.at(list).as_array())
    if (e.at("name").as_string() == name) return &e.as_object();
  return nullptr;
}

// promtool's verdict on a scrape, or nullopt when promtool is not installed.
std::optional<std::string> promtool(const std::string& text) {
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) return std::nullopt;
  const std::string path = ::testing::TempDir() + "/metrics." + std::to_string(::getpid());
  std::ofstream(path) << text;
  std::string out;
  FILE* p = ::popen(("promtool check metrics < " + path + " 2>&1; echo rc=$?").c_str(), "r");
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  ::pclose(p);
  std::remove(path.c_str());
  return out;
}

// A binding whose only slot is left cleanup_failed (the supervisor's kills
// suppressed by its test hook): /__status__'s commands show it with its pid
// and since when, /metrics counts it (promtool-valid), and a call answers a
// tool-level error that says who holds the slot.
TEST(McpStatus, HeldSlotShowsInStatusMetricsAndTheToolError) {
  auto stuck = std::make_shared<std::atomic<bool>>(true);
  Options options;
  bind::CommandTree tree = bind::load_manifest_file(fixture_manifest());
  tree.root.name = "held";
  // The FIFO in the host's /tmp must be reachable: this test is about slots,
  // not confinement.
  tree.hardening.confinement = process::Confinement::none();
  tree.supervisor.slots = 1;
  tree.supervisor.deadline = 300ms;
  tree.supervisor.cleanup_budget = 300ms;
  tree.supervisor.recheck_interval = 20ms;
  tree.supervisor.faults = std::make_shared<const process::SupervisorFaults>(
      process::SupervisorFaults{[stuck] { return stuck->load(); }});
  options.trees.push_back(std::move(tree));
  Harness h(std::move(options));
  // A worker started (code mode's fds are the pool's, not the commands').
  EXPECT_EQ(text_of(h.call("execute", {{"code", "async () => 1"}})), "1");
  const int fds_before = open_fds();

  EXPECT_FALSE(h.call("held_greet", {}).contains("isError"));
  const std::string pids = fifo(::testing::TempDir() + "/held_pids");
  auto first = h.start("tools/call", json::object{{"name", "held_spawn"},
                                                  {"arguments", {{"flags", {{"pids", pids}}}}}});
  const std::vector<int> tree_pids = read_pids(pids);
  std::remove(pids.c_str());
  ASSERT_EQ(tree_pids.size(), 3u);
  json::object r = first->wait().at("result").as_object();
  ASSERT_TRUE(r.at("isError").as_bool());
  EXPECT_NE(text_of(r).find("cleanup_failed"), std::string::npos) << text_of(r);

  json::object status = status_of(h.service());
  const json::object* held = entry(status, "commands", "held");
  ASSERT_NE(held, nullptr) << json::serialize(status);
  EXPECT_EQ(held->at("cleanup_failed").as_int64(), 1);
  EXPECT_EQ(held->at("calls").at("ok").to_number<std::uint64_t>(), 1u);
  EXPECT_EQ(held->at("calls").at("cleanup_failed").to_number<std::uint64_t>(), 1u);
  const json::object& slot = held->at("slot_status").at(0).as_object();
  EXPECT_EQ(slot.at("state").as_string(), "cleanup_failed");
  const int pid = static_cast<int>(slot.at("pid").as_int64());
  EXPECT_GT(pid, 0);
  EXPECT_TRUE(slot.at("since").as_string().ends_with("Z"));
  EXPECT_GE(slot.at("since_seconds").as_double(), 0.0);
  EXPECT_LT(slot.at("since_seconds").as_double(), 60.0);
  EXPECT_NE(entry(status, "commands", "fixture"), nullptr);  // the Harness's own manifest

  // The held slot answers busy as a tool-level error naming the holder.
  json::object busy = h.call("held_greet", {});
  ASSERT_TRUE(busy.contains("isError") && busy.at("isError").as_bool()) << json::serialize(busy);
  const json::object f = json::parse(text_of(busy)).as_object();
  EXPECT_EQ(f.at("code").as_string(), "busy");
  const std::string message(f.at("message").as_string());
  EXPECT_NE(message.find("slot 0 is held: cleanup_failed"), std::string::npos) << message;
  EXPECT_NE(message.find("pid " + std::to_string(pid)), std::string::npos) << message;
  EXPECT_NE(message.find(" s ago"), std::string::npos) << message;
  // From code mode too: the guest's rejection says the same.
  json::object code =
      h.call("execute", {{"code",
                          "async () => { try { await codemode.held_greet({}); return 'ran'; } "
                          "catch (e) { return String(e.message ?? e); } }"}});
  EXPECT_NE(text_of(code).find("slot 0 is held: cleanup_failed"), std::string::npos)
      << text_of(code);

  const std::string metrics = h.service().metrics();
  EXPECT_NE(metrics.find("corral_command_slots{binding=\"held\",state=\"cleanup_failed\"} 1\n"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("corral_command_calls_total{binding=\"held\",outcome=\"busy\"} 2\n"),
            std::string::npos)
      << metrics;
  EXPECT_NE(
      metrics.find("corral_command_calls_total{binding=\"held\",outcome=\"cleanup_failed\"} 1\n"),
      std::string::npos);
  EXPECT_NE(metrics.find("corral_command_slots{binding=\"fixture\",state=\"idle\"} 2\n"),
            std::string::npos);
  if (auto verdict = promtool(metrics)) {
    EXPECT_NE(verdict->find("rc=0"), std::string::npos) << *verdict << metrics;
  } else {
    std::fprintf(stderr, "promtool is not installed: the scrape's format is not checked\n");
  }

  // Once the unit can be emptied the slot frees and the command runs again.
  stuck->store(false);
  EXPECT_TRUE(eventually([&] {
    return entry(status_of(h.service()), "commands", "held")->at("cleanup_failed").as_int64() == 0;
  }));
  for (int p : tree_pids) EXPECT_TRUE(eventually([&] { return !alive(p); })) << p;
  EXPECT_FALSE(h.call("held_greet", {}).contains("isError"));
  EXPECT_LE(open_fds(), fds_before + 2);
}

// Code mode is counted like every other way of running: each execute by its
// outcome, in the scrape promtool accepts.
TEST(McpStatus, ExecuteRunsAreCountedByOutcome) {
  Harness h(Options{});
  EXPECT_FALSE(h.call("execute", {{"code", "async () => 1 + 1"}}).contains("isError"));
  EXPECT_TRUE(
      h.call("execute", {{"code", "async () => { throw new Error('no'); }"}}).contains("isError"));
  EXPECT_TRUE(h.call("execute", {{"code", "async () => {"}}).contains("isError"));
  const std::string metrics = h.service().metrics();
  EXPECT_NE(metrics.find("corral_mcp_executions_total{outcome=\"ok\"} 1\n"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("corral_mcp_executions_total{outcome=\"guest_error\"} 1\n"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("corral_mcp_executions_total{outcome=\"compile_error\"} 1\n"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("corral_mcp_executions_total{outcome=\"timeout\"} 0\n"), std::string::npos)
      << metrics;
  EXPECT_EQ(metrics.find("corral_mcp_execution_seconds_total 0\n"), std::string::npos) << metrics;
  if (auto verdict = promtool(metrics)) {
    EXPECT_NE(verdict->find("rc=0"), std::string::npos) << *verdict << metrics;
  }
}

Upstream probe_upstream(std::string marker = {}) {
  Upstream u;
  u.name = "probe";
  u.command = {"/bin/sh", std::string(CORRAL_SOURCE_DIR) + "/tests/mcp/fixtures/env_upstream.sh"};
  if (!marker.empty()) u.command.push_back(marker);
  // Not about confinement (tests/mcp/confinement_test.cc is): the host's
  // filesystem, for the script in the source tree and the marker in /tmp.
  u.confinement = process::Confinement::none();
  return u;
}

// The text a code-mode call of codemode.probe.TOOL gets (or its rejection).
std::string probe(Harness& h, const std::string& tool) {
  json::object r = h.call(
      "execute", {{"code", "async () => { try { return await codemode.probe." + tool +
                               "({}); } catch (e) { return 'ERR ' + String(e.message ?? e); } }"}});
  return text_of(r);
}

int pid_in(const std::string& text) {
  const auto at = text.find("pid=");
  return at == std::string::npos ? 0 : std::atoi(text.c_str() + at + 4);
}

// Deny by default: the upstream sees the allowed and set variables and PATH,
// never CORRAL_AUTH_TOKEN, whatever its entry lists, nor anything else.
TEST(McpUpstream, StdioServerGetsOnlyTheAllowedEnvironment) {
  ::setenv("CORRAL_AUTH_TOKEN", "secret-token", 1);
  ::setenv("D_ALLOWED", "yes", 1);
  ::setenv("D_DENIED", "no", 1);
  Options options;
  Upstream u = probe_upstream();
  u.env_allow = {"D_ALLOWED", "CORRAL_AUTH_TOKEN", "D_ABSENT"};  // the parser refuses CORRAL_*
  u.env_set = {{"D_FIXED", "1"}, {"CORRAL_MCP_UPSTREAM", "x"}};
  options.upstreams = {u};
  {
    Harness h(std::move(options));
    const std::string seen = probe(h, "env");
    EXPECT_NE(seen.find(",D_ALLOWED,"), std::string::npos) << seen;
    EXPECT_NE(seen.find(",D_FIXED,"), std::string::npos) << seen;
    EXPECT_NE(seen.find(",PATH,"), std::string::npos) << seen;
    EXPECT_EQ(seen.find("CORRAL_"), std::string::npos) << seen;
    EXPECT_EQ(seen.find("D_DENIED"), std::string::npos) << seen;
    EXPECT_EQ(seen.find(",HOME,"), std::string::npos) << seen;
    EXPECT_EQ(seen.find("D_ABSENT"), std::string::npos) << seen;
  }
  ::unsetenv("CORRAL_AUTH_TOKEN");
  ::unsetenv("D_ALLOWED");
  ::unsetenv("D_DENIED");
  // The setting's parser: env entries, and CORRAL_* refused by name.
  auto parsed = parse_upstreams(
      R"({"p": {"command": ["x"], "env": {"allow": ["HOME"], "set": {"A": "b"}}}})");
  ASSERT_EQ(parsed.size(), 1u);
  EXPECT_EQ(parsed[0].env_allow, std::vector<std::string>{"HOME"});
  EXPECT_EQ(parsed[0].env_set.at("A"), "b");
  EXPECT_THROW(
      parse_upstreams(R"({"p": {"command": ["x"], "env": {"allow": ["CORRAL_AUTH_TOKEN"]}}})"),
      std::invalid_argument);
  EXPECT_THROW(parse_upstreams(R"({"p": {"command": ["x"], "env": {"set": {"CORRAL_X": "1"}}}})"),
               std::invalid_argument);
  EXPECT_THROW(parse_upstreams(R"({"p": {"command": ["x"], "env": {"pass": []}}})"),
               std::invalid_argument);
  // A key of the other transport is refused, not ignored.
  EXPECT_THROW(parse_upstreams(R"({"p": {"url": "http://h/mcp", "env": {"allow": ["HOME"]}}})"),
               std::invalid_argument);
  EXPECT_THROW(parse_upstreams(R"({"p": {"url": "http://h/mcp", "env": {}}})"),
               std::invalid_argument);
  EXPECT_THROW(parse_upstreams(R"({"p": {"command": ["x"], "headers": {"A": "b"}}})"),
               std::invalid_argument);
  EXPECT_NO_THROW(parse_upstreams(R"({"p": {"url": "http://h/mcp", "headers": {"A": "b"}}})"));
}

// A run that ends while its upstream call waits (at its own timeout here)
// tells the server to give that call up.
TEST(McpUpstream, ACallLeftWaitingByItsRunIsCancelledUpstream) {
  Options options;
  options.upstreams = {probe_upstream()};
  Harness h(std::move(options));
  const json::object r =
      h.call("execute", {{"code", "async () => codemode.probe.hang({})"}, {"timeout", 300}});
  EXPECT_TRUE(r.at("isError").as_bool()) << json::serialize(r);
  EXPECT_NE(text_of(r).find("timeout"), std::string::npos) << json::serialize(r);
  // Ids 1 and 2 were initialize and tools/list; 3 was the call. (The
  // value comes back as JSON text: a string, quoted.)
  EXPECT_TRUE(eventually([&] { return probe(h, "cancelled") == R"("cancelled=3,")"; }))
      << probe(h, "cancelled");
}

// A stdio server that never answers a call: the call is answered at its
// timeout (it never waits forever, and leaves nothing behind), and the
// server is told to give it up.
TEST(McpUpstream, AStdioCallPastItsTimeoutIsAnsweredAndCancelledUpstream) {
  std::unique_ptr<UpstreamClient> client = UpstreamClient::connect(probe_upstream(), 10s, Logger{});
  struct Call {
    std::future<std::string> text;
    std::function<void()> cancel;
  };
  auto start = [&](const std::string& tool, std::chrono::milliseconds timeout) {
    auto answered = std::make_shared<std::promise<std::string>>();
    Call call;
    call.text = answered->get_future();
    call.cancel = client->call_tool(
        tool, json::object{}, timeout,
        [answered](std::optional<json::object> result, std::string error) {
          answered->set_value(result
                                  ? std::string(result->at("content").at(0).at("text").as_string())
                                  : "error: " + error);
        });
    return call;
  };
  // A long call first, so the reader sleeps towards its deadline; a short
  // one after it is still answered at its own (ids 3 and 4).
  Call long_call = start("hang", 60'000ms);
  const auto started = std::chrono::steady_clock::now();
  Call short_call = start("hang", 200ms);
  ASSERT_EQ(short_call.text.wait_for(20s), std::future_status::ready);
  EXPECT_GE(std::chrono::steady_clock::now() - started, 200ms);
  EXPECT_EQ(short_call.text.get(),
            "error: the upstream server probe did not answer tools/call in time");
  // The long one is still waiting; cancelling it answers it at once.
  EXPECT_EQ(long_call.text.wait_for(0s), std::future_status::timeout);
  long_call.cancel();
  ASSERT_EQ(long_call.text.wait_for(20s), std::future_status::ready);
  EXPECT_EQ(long_call.text.get(), "error: cancelled");
  // The server was told to give both up, in that order.
  Call told = start("cancelled", 10'000ms);
  ASSERT_EQ(told.text.wait_for(20s), std::future_status::ready);
  EXPECT_EQ(told.text.get(), "cancelled=4,3,");
  client->close();
}

// An upstream that exits is restarted: its tools work again (a new pid), the
// restart is counted in the status and the metrics, the old process is gone.
TEST(McpUpstream, ExitedServerIsRestartedAndServesAgain) {
  Options options;
  options.upstreams = {probe_upstream()};
  options.restart_backoff_min = 100ms;
  options.restart_backoff_max = 400ms;
  Harness h(std::move(options));
  ASSERT_GT(pid_in(probe(h, "env")), 0);
  const int fds_before = open_fds();
  const json::object at_start = status_of(h.service());
  const json::object* up = entry(at_start, "upstreams", "probe");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->at("state").as_string(), "up");
  // The unit's leader: the server itself, or the init of its pid namespace
  // (the pid the server sees is then its namespace's).
  const int first = static_cast<int>(up->at("pid").as_int64());
  ASSERT_GT(first, 0);
  EXPECT_EQ(up->at("restarts").to_number<std::uint64_t>(), 0u);

  EXPECT_NE(probe(h, "quit").find("ERR"), std::string::npos);  // it exits without answering
  int second = 0;
  EXPECT_TRUE(eventually([&] {
    const json::object s = status_of(h.service());
    const json::object* p = entry(s, "upstreams", "probe");
    second = static_cast<int>(p->at("pid").as_int64());
    return p->at("state").as_string() == "up" && second != first;
  }));
  const std::string again = probe(h, "env");
  EXPECT_GT(pid_in(again), 0) << again;
  EXPECT_GT(second, 0);
  EXPECT_NE(second, first);
  EXPECT_FALSE(alive(first));
  const json::object s = status_of(h.service());
  up = entry(s, "upstreams", "probe");
  EXPECT_EQ(up->at("restarts").to_number<std::uint64_t>(), 1u);
  EXPECT_EQ(up->at("last_exit").as_string(), "exit 5");
  EXPECT_NE(h.service().metrics().find("corral_upstream_restarts_total{upstream=\"probe\"} 1\n"),
            std::string::npos);
  EXPECT_LE(open_fds(), fds_before + 2);
}

// One that exits at once every time backs off: a bounded number of attempts
// over a window, little CPU, calls meanwhile answer `unavailable` saying when
// the next attempt is; once it can start again it serves.
TEST(McpUpstream, CrashLoopBacksOffAndRecovers) {
  const std::string marker = ::testing::TempDir() + "/crash." + std::to_string(::getpid());
  std::remove(marker.c_str());
  Options options;
  options.upstreams = {probe_upstream(marker)};
  options.restart_backoff_min = 50ms;
  options.restart_backoff_max = 400ms;
  Harness h(std::move(options));
  const int first = pid_in(probe(h, "env"));
  ASSERT_GT(first, 0);
  const int fds_before = open_fds();
  std::ofstream(marker) << "crash";
  rusage before{};
  ::getrusage(RUSAGE_SELF, &before);
  const auto crashed = std::chrono::steady_clock::now();
  EXPECT_NE(probe(h, "quit").find("ERR"), std::string::npos);
  // Five attempts in a row fail: the first at 50 ms, then 100, 200, 400 and
  // 400 ms after each one ended. Awaited (each attempt's own start and exit
  // take longer on a loaded or sanitized build), polled slowly: the polling
  // is this process's CPU too.
  json::object s;
  const json::object* up = nullptr;
  const auto give_up = crashed + 20s;
  for (;;) {
    s = status_of(h.service());
    up = entry(s, "upstreams", "probe");
    if (up->at("state").as_string() == "failed" || std::chrono::steady_clock::now() > give_up)
      break;
    std::this_thread::sleep_for(100ms);
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - crashed).count();
  EXPECT_EQ(up->at("state").as_string(), "failed") << json::serialize(*up);
  const auto restarts = up->at("restarts").to_number<std::uint64_t>();
  EXPECT_GE(restarts, 5u) << json::serialize(*up);
  // Never sooner than the backoff allows: at most one attempt per point of
  // the schedule (50, 150, 350, 750, 1150 ms, then every 400 ms) passed.
  std::uint64_t allowed = 0;
  for (double at = 0.05, delay = 0.1; at <= elapsed;
       at += delay, delay = std::min(delay * 2, 0.4)) {
    ++allowed;
  }
  EXPECT_LE(restarts, allowed + 1) << "in " << elapsed << " s: " << json::serialize(*up);
  EXPECT_EQ(up->at("last_exit").as_string(), "exit 7");
  rusage after{};
  ::getrusage(RUSAGE_SELF, &after);
  const double cpu = (after.ru_utime.tv_sec - before.ru_utime.tv_sec) +
                     (after.ru_stime.tv_sec - before.ru_stime.tv_sec) +
                     (after.ru_utime.tv_usec - before.ru_utime.tv_usec) / 1e6 +
                     (after.ru_stime.tv_usec - before.ru_stime.tv_usec) / 1e6;
  // Waiting is not spinning: a quarter of a core at most.
  EXPECT_LT(cpu, 0.25 * elapsed) << "the test process (the service) used " << cpu << " s of CPU in "
                                 << elapsed << " s";
  std::fprintf(stderr, "crash loop: %llu attempts in %.2f s, %.3f s CPU\n",
               static_cast<unsigned long long>(restarts), elapsed, cpu);

  // Between attempts (not while one is starting) the status and a call
  // name the next one.
  EXPECT_TRUE(eventually([&] {
    return entry(status_of(h.service()), "upstreams", "probe")->contains("next_attempt");
  }));
  std::string down;
  EXPECT_TRUE(eventually([&] {
    down = probe(h, "env");
    return down.find("next attempt") != std::string::npos;
  })) << down;
  EXPECT_NE(down.find("unavailable: the upstream server probe is restarting"), std::string::npos)
      << down;

  std::remove(marker.c_str());  // it can start again: within one backoff cap
  EXPECT_TRUE(eventually([&] {
    return entry(status_of(h.service()), "upstreams", "probe")->at("state").as_string() == "up";
  }));
  EXPECT_GT(pid_in(probe(h, "env")), 0);
  // Seven failed starts left no descriptor behind (pipes, pidfds, cgroup
  // files of each attempt).
  EXPECT_LE(open_fds(), fds_before + 2);
}

}  // namespace
}  // namespace corral::mcp::testing
