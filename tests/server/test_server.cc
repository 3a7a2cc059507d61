// tests/server/test_server.cc: the executor server embedded in a minimal
// host, for the end-to-end tests (tests/e2e) and the benchmarks. It prints
// one JSON line with its address once it listens, serves until its standard
// input closes or SIGTERM/SIGINT arrives, then closes (drains) and exits 0.
// Each line read from standard input is acknowledged with {"ack":LINE}.
//
//   corral_test_server --worker /path/to/corral [--port 0] [--workers 2]
//     [--default-timeout-ms N] [--max-timeout-ms N] [--response-limit N]
//     [--token T] [--metrics] [--ping-interval-ms N] [--max-age-ms N]
//     [--shutdown-delay-ms N] [--drain-ms N] [--no-harden]
//     [--allowed-origins ORIGIN,...]
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>

#include "corral/server.hpp"

int main(int argc, char** argv) {
  using std::chrono::milliseconds;
  CLI::App app{"corral executor server, embedded for tests"};
  std::string worker;
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::size_t workers = 2;
  long default_timeout = 30'000;
  long max_timeout = 60'000;
  long response_limit = 0;
  long ping_interval = 30'000;
  long max_age = 0;
  long shutdown_delay = 0;
  long drain = 5'000;
  std::string token;
  bool metrics = false;
  bool no_harden = false;
  app.add_option("--worker", worker, "The corral binary")->required();
  app.add_option("--host", host);
  app.add_option("--port", port);
  app.add_option("--workers", workers);
  app.add_option("--default-timeout-ms", default_timeout);
  app.add_option("--max-timeout-ms", max_timeout);
  app.add_option("--response-limit", response_limit);
  app.add_option("--ping-interval-ms", ping_interval);
  app.add_option("--max-age-ms", max_age);
  app.add_option("--shutdown-delay-ms", shutdown_delay);
  app.add_option("--drain-ms", drain);
  app.add_option("--token", token, "Admit only Authorization: Bearer TOKEN");
  app.add_flag("--metrics", metrics, "Serve /metrics");
  app.add_flag("--no-harden", no_harden);
  std::vector<std::string> allowed_origins;
  app.add_option("--allowed-origins", allowed_origins, "Origins allowed besides loopback ones")
      ->delimiter(',');
  CLI11_PARSE(app, argc, argv);

  corral::server::Options options;
  options.host = host;
  options.port = port;
  options.pool.worker_command = {worker, "worker"};
  options.pool.max_workers = workers;
  options.pool.harden_workers = !no_harden;
  options.default_timeout = milliseconds(default_timeout);
  options.max_timeout = milliseconds(max_timeout);
  if (response_limit > 0) options.response_limit = static_cast<std::size_t>(response_limit);
  options.ping_interval = milliseconds(ping_interval);
  if (max_age > 0) options.max_connection_age = milliseconds(max_age);
  options.shutdown_delay = milliseconds(shutdown_delay);
  options.shutdown_drain = milliseconds(drain);
  if (metrics) options.metrics = corral::server::own_metrics();
  options.allowed_origins = allowed_origins;
  if (!token.empty()) {
    options.identify = corral::server::sync_identity([token](const corral::server::Handshake& h) {
      auto found = h.headers.find("authorization");
      if (found != h.headers.end() && found->second == "Bearer " + token) {
        return corral::server::Decision::admit("token holder");
      }
      return corral::server::Decision::refuse("missing or wrong bearer token");
    });
  }

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  corral::server::Server server(std::move(options));
  try {
    server.listen();
  } catch (const std::system_error& e) {
    std::fprintf(stderr, "corral_test_server: %s\n", e.what());
    return 2;
  }
  const corral::server::Address address = server.address();
  std::printf("{\"address\":\"%s\",\"port\":%u}\n", address.address.c_str(), address.port);
  std::fflush(stdout);

  // Lines on stdin switch acceptance ("stop-accepting", "resume-accepting");
  // its end closes the server, as SIGTERM does.
  std::thread stdin_watch([&server] {
    std::string line;
    while (std::getline(std::cin, line)) {
      if (line == "stop-accepting") server.stop_accepting();
      if (line == "resume-accepting") server.resume_accepting();
      std::printf("{\"ack\":\"%s\"}\n", line.c_str());
      std::fflush(stdout);
    }
    kill(getpid(), SIGTERM);
  });
  stdin_watch.detach();
  int received = 0;
  sigwait(&signals, &received);
  server.close();
  return 0;
}
