// bench/server_bench.cc: load generator for the executor protocol.
//
// Closed-loop WebSocket clients (one thread and one connection each, one
// execute in flight per connection) measure executions per second and the
// p50/p99 latency of an execute round trip, for each standard workload
// (bench/workloads.hpp) on one and on many connections, and for a trivial
// run sent 5 ms after the previous answer (latency when the server is not
// saturated). Every run is offered the `echo` tool, which the client
// answers (`tool.call` over the same socket), and every answer is checked
// against the workload's expected value (a mismatch counts as failed).
// Each request carries a source no earlier one had (bench/unique_source.hpp).
//
//   server_bench [--url ws://HOST:PORT] [--seconds 3] [--many 16] [--workers 2]
//                [--executions-per-worker N] [--retire-after N] [--retire-on-growth BYTES]
//                [--only WORKLOAD]
//
// Without --url it embeds a corral server (2 workers, real `corral worker`
// processes, retired after --retire-after runs: the pool's default unless
// given); with --url it drives any server speaking the protocol (the Node
// baseline in bench/peers/ws_baseline.js). Results: a table on stderr and
// one JSON object on stdout. How to read them: BENCHMARKS.md.
#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/json.hpp>
#include <boost/url/parse.hpp>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "corral/server.hpp"
#include "workloads.hpp"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace json = boost::json;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using corral::bench::unique_source;

struct Scenario {
  std::string name;
  std::string code;
  std::string expect;  // the value's JSON
  int connections = 1;
  // Idle time between one answer and the next request (a caller that is
  // not saturating the server); not part of the measured latency.
  std::chrono::microseconds pause{0};
};

struct Result {
  std::string name;
  int connections = 0;
  std::uint64_t executions = 0;
  double seconds = 0;
  double p50_us = 0;
  double p99_us = 0;
  std::uint64_t failures = 0;
};

double quantile(std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = (sorted.size() - 1) * q;
  const std::size_t lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

// One connection's closed loop until `stop`; samples only after `measure`.
void drive(const std::string& host, const std::string& port, const Scenario& scenario,
           const std::atomic<bool>& measure, const std::atomic<bool>& stop,
           std::vector<double>& samples, std::uint64_t& failures) {
  asio::io_context ioc;
  websocket::stream<tcp::socket> ws(ioc);
  tcp::resolver resolver(ioc);
  asio::connect(ws.next_layer(), resolver.resolve(host, port));
  ws.next_layer().set_option(tcp::no_delay(true));
  ws.handshake(host, "/");
  ws.text(true);
  json::object params{{"code", scenario.code},
                      {"tools", json::array{json::object{{"name", "echo"}}}}};
  beast::flat_buffer buffer;
  std::int64_t id = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    if (scenario.pause.count() > 0) std::this_thread::sleep_for(scenario.pause);
    const bool counted = measure.load(std::memory_order_relaxed);
    const auto started = Clock::now();
    params["code"] = unique_source(scenario.code);
    ws.write(asio::buffer(json::serialize(json::object{
        {"jsonrpc", "2.0"}, {"id", ++id}, {"method", "execute"}, {"params", params}})));
    while (true) {
      buffer.clear();
      ws.read(buffer);
      json::value message = json::parse(beast::buffers_to_string(buffer.data()));
      json::object& object = message.as_object();
      if (const json::value* method = object.if_contains("method")) {
        if (*method == "tool.call") {
          ws.write(asio::buffer(
              json::serialize(json::object{{"jsonrpc", "2.0"},
                                           {"id", object.at("id")},
                                           {"result", object.at("params").at("input")}})));
        }
        continue;
      }
      if (object.at("id").as_int64() != id) continue;
      const json::value* result = object.if_contains("result");
      const bool ok = result && result->at("ok").as_bool() &&
                      json::serialize(result->at("execution").at("value")) == scenario.expect;
      if (counted) {
        if (ok) {
          samples.push_back(
              std::chrono::duration<double, std::micro>(Clock::now() - started).count());
        } else {
          ++failures;
        }
      }
      break;
    }
  }
  beast::error_code ignored;
  ws.close(websocket::close_code::normal, ignored);
}

Result run(const std::string& host, const std::string& port, const Scenario& scenario,
           double seconds) {
  std::atomic<bool> measure{false};
  std::atomic<bool> stop{false};
  std::vector<std::vector<double>> samples(scenario.connections);
  std::vector<std::uint64_t> failures(scenario.connections, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < scenario.connections; ++i) {
    threads.emplace_back(
        [&, i] { drive(host, port, scenario, measure, stop, samples[i], failures[i]); });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // warm-up: workers spawn
  measure = true;
  const auto started = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  measure = false;
  const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
  stop = true;
  for (auto& thread : threads) thread.join();
  Result result{scenario.name, scenario.connections, 0, elapsed, 0, 0, 0};
  std::vector<double> all;
  for (int i = 0; i < scenario.connections; ++i) {
    all.insert(all.end(), samples[i].begin(), samples[i].end());
    result.failures += failures[i];
  }
  std::sort(all.begin(), all.end());
  result.executions = all.size();
  result.p50_us = quantile(all, 0.5);
  result.p99_us = quantile(all, 0.99);
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  std::string url;
  double seconds = 3;
  int many = 16;
  std::size_t workers = 2;
  std::size_t executions_per_worker = 0;          // 0: the pool's default
  std::uint64_t retire_after = 0;                 // 0: the pool's default
  std::optional<std::uint64_t> retire_on_growth;  // bytes; none: the pool's default
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--url") {
      url = next();
    } else if (arg == "--seconds") {
      seconds = std::stod(next());
    } else if (arg == "--many") {
      many = std::stoi(next());
    } else if (arg == "--workers") {
      workers = std::stoul(next());
    } else if (arg == "--executions-per-worker") {
      executions_per_worker = std::stoul(next());
    } else if (arg == "--retire-after") {
      retire_after = std::stoull(next());
    } else if (arg == "--retire-on-growth") {
      retire_on_growth = std::stoull(next());
    } else if (arg == "--only") {
      only = next();
    } else {
      std::fprintf(stderr, "server_bench: unknown argument %s\n", arg.c_str());
      return 2;
    }
  }

  std::unique_ptr<corral::server::Server> server;
  std::string host = "127.0.0.1";
  std::string port;
  if (url.empty()) {
    corral::server::Options options;
    options.pool.worker_command = {CORRAL_BINARY, "worker"};
    options.pool.max_workers = workers;
    if (executions_per_worker) options.pool.executions_per_worker = executions_per_worker;
    if (retire_after) options.pool.retire_after_executions = retire_after;
    if (retire_on_growth) options.pool.retire_on_growth = *retire_on_growth;
    server = std::make_unique<corral::server::Server>(std::move(options));
    server->listen();
    port = std::to_string(server->address().port);
    url = "ws://127.0.0.1:" + port + " (embedded corral)";
  } else {
    auto parsed = boost::urls::parse_uri(url);
    if (!parsed || !parsed->has_port()) {
      std::fprintf(stderr, "server_bench: --url must be ws://HOST:PORT\n");
      return 2;
    }
    host = std::string(parsed->host());
    port = std::string(parsed->port());
  }

  std::vector<Scenario> scenarios;
  for (const corral::bench::Workload& w : corral::bench::load_workloads()) {
    if (!only.empty() && w.name != only) continue;
    scenarios.push_back({w.name, w.source, w.expect, 1});
    scenarios.push_back({w.name, w.source, w.expect, many});
    if (w.name == "trivial")
      scenarios.push_back({"paced_5ms", w.source, w.expect, 1, std::chrono::milliseconds(5)});
  }
  json::array results;
  std::fprintf(stderr, "server_bench against %s, %.1f s per scenario\n", url.c_str(), seconds);
  std::fprintf(stderr, "%-10s %5s %12s %10s %10s %8s\n", "scenario", "conns", "exec/s", "p50 us",
               "p99 us", "failed");
  for (const Scenario& scenario : scenarios) {
    Result r = run(host, port, scenario, seconds);
    const double rate = r.executions / r.seconds;
    std::fprintf(stderr, "%-10s %5d %12.0f %10.0f %10.0f %8llu\n", r.name.c_str(), r.connections,
                 rate, r.p50_us, r.p99_us, static_cast<unsigned long long>(r.failures));
    results.push_back(json::object{{"scenario", r.name},
                                   {"connections", r.connections},
                                   {"executions_per_sec", rate},
                                   {"p50_us", r.p50_us},
                                   {"p99_us", r.p99_us},
                                   {"failures", r.failures}});
  }
  std::printf("%s\n", json::serialize(json::object{{"url", url}, {"results", results}}).c_str());
  if (server) server->close();
  return 0;
}
