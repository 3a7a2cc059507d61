// src/server/metrics.hpp: the server's own instruments, written in the
// Prometheus text exposition format 0.0.4 by hand (Debian packages no
// Prometheus C++ client).
//
// Counters are plain atomics; an uninstrumented Metrics touches none of them
// (every method returns at its first branch), which is what makes
// `instrumented = false` free.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "corral/failure.hpp"
#include "corral/pool.hpp"

namespace corral::server {

class Metrics {
 public:
  // Upper bounds of the execution duration histogram, in seconds.
  static constexpr std::array<double, 12> kBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                      0.5,   1,    2.5,   5,    10,  30};

  explicit Metrics(bool instrumented) : instrumented_(instrumented) {}

  bool instrumented() const noexcept { return instrumented_; }

  void connection_opened() noexcept;
  // Call once per opened connection (the session guards against a second
  // call); one more close than opens is a bug, asserted in debug builds.
  void connection_closed() noexcept;
  void connection_rejected() noexcept;
  // outcome: nullopt for success, else the failure code the caller received.
  void execution_finished(std::optional<FailureCode> outcome, double seconds) noexcept;
  void tool_call() noexcept;

  std::uint64_t connections_active() const noexcept { return connections_active_.load(); }
  std::uint64_t connection_rejections() const noexcept { return rejections_.load(); }

  // The whole exposition; pool gauges come from `stats`.
  std::string render(const pool::Stats& stats) const;

 private:
  bool instrumented_;
  std::atomic<std::uint64_t> connections_active_{0};
  std::atomic<std::uint64_t> connections_total_{0};
  std::atomic<std::uint64_t> rejections_{0};
  std::array<std::atomic<std::uint64_t>, kFailureCodeCount + 1> executions_{};
  std::array<std::atomic<std::uint64_t>, kBuckets.size()> buckets_{};  // not cumulative
  std::atomic<std::uint64_t> duration_count_{0};
  std::atomic<std::uint64_t> duration_sum_micros_{0};
  std::atomic<std::uint64_t> tool_calls_{0};
};

}  // namespace corral::server
