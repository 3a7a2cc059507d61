#include "server/metrics.hpp"

#include <fmt/format.h>

#include <cassert>

#include "server/process_metrics.hpp"

namespace corral::server {

void Metrics::connection_opened() noexcept {
  if (!instrumented_) return;
  connections_active_.fetch_add(1);
  connections_total_.fetch_add(1);
}

void Metrics::connection_closed() noexcept {
  if (!instrumented_) return;
  // Each session closes what it opened once (WebSocketSession::counted_); a
  // second close is a bug to find, not a count to hide under a clamp.
  [[maybe_unused]] const std::uint64_t before = connections_active_.fetch_sub(1);
  assert(before > 0 && "connection_closed without a matching connection_opened");
}

void Metrics::connection_rejected() noexcept {
  if (!instrumented_) return;
  rejections_.fetch_add(1);
}

void render_histogram(std::string& out, std::string_view name, std::span<const double> bounds,
                      std::span<const std::uint64_t> counts, std::uint64_t count,
                      std::uint64_t sum_micros) {
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    cumulative += counts[i];
    fmt::format_to(std::back_inserter(out), "{}_bucket{{le=\"{}\"}} {}\n", name, bounds[i],
                   cumulative);
  }
  fmt::format_to(std::back_inserter(out), "{}_bucket{{le=\"+Inf\"}} {}\n", name, count);
  fmt::format_to(std::back_inserter(out), "{}_sum {}\n", name,
                 static_cast<double>(sum_micros) / 1e6);
  fmt::format_to(std::back_inserter(out), "{}_count {}\n", name, count);
}

void Metrics::execution_finished(std::optional<FailureCode> outcome, double seconds) noexcept {
  if (!instrumented_) return;
  executions_[outcome ? 1 + static_cast<int>(*outcome) : 0].fetch_add(1);
  durations_.observe(seconds);
}

void Metrics::queue_waited(double seconds) noexcept {
  if (!instrumented_) return;
  waits_.observe(seconds);
}

void Metrics::tool_call() noexcept {
  if (!instrumented_) return;
  tool_calls_.fetch_add(1);
}

namespace {

void family(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

}  // namespace

std::string Metrics::render(const pool::Stats& stats) const {
  std::string out;
  if (!instrumented_) return out;
  auto line = [&out](std::string_view name, auto value) {
    fmt::format_to(std::back_inserter(out), "{} {}\n", name, value);
  };
  // name{label="value"} count
  auto labelled = [&out](std::string_view name, std::string_view label, std::string_view value,
                         std::uint64_t count) {
    fmt::format_to(std::back_inserter(out), "{}{{{}=\"{}\"}} {}\n", name, label, value, count);
  };

  family(out, "corral_connections_active", "gauge", "Open executor WebSocket connections.");
  line("corral_connections_active", connections_active_.load());
  family(out, "corral_connections_total", "counter", "Executor WebSocket connections opened.");
  line("corral_connections_total", connections_total_.load());
  family(out, "corral_connection_rejections_total", "counter",
         "Upgrades the request guard (400, 403) or the identity hook (403) refused.");
  line("corral_connection_rejections_total", rejections_.load());

  family(out, "corral_executions_total", "counter",
         "Executions answered, by outcome (ok or the failure code).");
  labelled("corral_executions_total", "outcome", "ok", executions_[0].load());
  for (int code = 0; code < kFailureCodeCount; ++code) {
    labelled("corral_executions_total", "outcome", to_string(static_cast<FailureCode>(code)),
             executions_[1 + code].load());
  }

  family(out, "corral_execution_duration_seconds", "histogram",
         "Time from an execute request to its answer.");
  durations_.render(out, "corral_execution_duration_seconds");
  family(out, "corral_queue_wait_seconds", "histogram",
         "Time an execution waited between admission and a worker slot.");
  waits_.render(out, "corral_queue_wait_seconds");

  family(out, "corral_queue_depth", "gauge", "Executions waiting for a worker slot.");
  line("corral_queue_depth", stats.queue_depth);
  family(out, "corral_queue_capacity", "gauge",
         "Executions that may wait for a slot (--max-queue); past it, queue_overflow.");
  line("corral_queue_capacity", queue_capacity_);
  family(out, "corral_execution_slots", "gauge",
         "Executions that can run at once: workers x executions per worker.");
  line("corral_execution_slots", slots_);
  family(out, "corral_workers_live", "gauge", "Worker processes alive.");
  line("corral_workers_live", stats.workers_live);
  family(out, "corral_executions_running", "gauge", "Executions running in a worker.");
  line("corral_executions_running", stats.executions_running);
  family(out, "corral_tool_calls_total", "counter", "Tool calls bridged to callers.");
  line("corral_tool_calls_total", tool_calls_.load());

  // The pool's own lifecycle: every reason, zeros included, so a rate over
  // a reason that has not happened yet is 0 rather than absent.
  family(out, "corral_workers_started_total", "counter", "Worker processes spawned.");
  line("corral_workers_started_total", stats.workers_started);
  family(out, "corral_worker_exits_total", "counter",
         "Worker processes that ended, by why (retired, crashed, hung, ...).");
  for (int exit = 0; exit < pool::kWorkerExitCount; ++exit) {
    labelled("corral_worker_exits_total", "reason",
             pool::to_string(static_cast<pool::WorkerExit>(exit)),
             stats.worker_exits[static_cast<std::size_t>(exit)]);
  }
  family(out, "corral_pool_rejections_total", "counter",
         "Executions the pool refused before they ran, by why.");
  for (int why = 0; why < pool::kRejectionCount; ++why) {
    labelled("corral_pool_rejections_total", "reason",
             pool::to_string(static_cast<pool::Rejection>(why)),
             stats.rejections[static_cast<std::size_t>(why)]);
  }
  family(out, "corral_build_info", "gauge", "Always 1; the version is a label.");
  fmt::format_to(std::back_inserter(out), "corral_build_info{{version=\"{}\"}} 1\n",
                 CORRAL_VERSION);
  append_process_metrics(out);
  return out;
}

}  // namespace corral::server
