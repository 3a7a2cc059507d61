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
#include <span>
#include <string>
#include <string_view>

#include "corral/failure.hpp"
#include "corral/pool.hpp"

namespace corral::server {

// Histogram::render's body (not a template): bucket lines cumulative, then
// +Inf, sum and count.
void render_histogram(std::string& out, std::string_view name, std::span<const double> bounds,
                      std::span<const std::uint64_t> counts, std::uint64_t count,
                      std::uint64_t sum_micros);

// A histogram's counts: per bucket (not cumulative; `Bounds` are the upper
// bounds, ascending; past the last only the count grows), the count and the
// sum. Lock-free: observed from any thread, rendered cumulative.
template <const auto& Bounds>
class Histogram {
 public:
  void observe(double seconds) noexcept {
    std::size_t bucket = 0;
    while (bucket < Bounds.size() && seconds > Bounds[bucket]) ++bucket;
    if (bucket < Bounds.size()) buckets_[bucket].fetch_add(1);
    count_.fetch_add(1);
    sum_micros_.fetch_add(static_cast<std::uint64_t>(seconds > 0 ? seconds * 1e6 : 0));
  }
  // The `name_bucket`, `name_sum` and `name_count` lines.
  void render(std::string& out, std::string_view name) const {
    std::array<std::uint64_t, Bounds.size()> counts{};
    for (std::size_t i = 0; i < counts.size(); ++i) counts[i] = buckets_[i].load();
    render_histogram(out, name, Bounds, counts, count_.load(), sum_micros_.load());
  }

 private:
  std::array<std::atomic<std::uint64_t>, Bounds.size()> buckets_{};
  std::atomic<std::uint64_t> count_{0};
  std::atomic<std::uint64_t> sum_micros_{0};
};

class Metrics {
 public:
  // Upper bounds of the execution duration histogram, in seconds: up to
  // the longest timeout the daemon allows by default (--max-timeout 5m).
  static constexpr std::array<double, 15> kBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
                                                      2.5,   5,    10,    30,   60,  120,  300};
  // Upper bounds of the queue wait histogram (admission to a worker slot).
  static constexpr std::array<double, 12> kWaitBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                          0.1,   0.25,   0.5,   1,    2.5,   5};

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
  // A run waited this long between admission and its worker slot.
  void queue_waited(double seconds) noexcept;
  // What the pool can hold: worker slots (workers x runs per worker) and
  // queued runs. Set once, before serving.
  void set_capacity(std::size_t slots, std::size_t queue) noexcept {
    slots_ = slots;
    queue_capacity_ = queue;
  }

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
  Histogram<kBuckets> durations_;
  std::atomic<std::uint64_t> tool_calls_{0};
  Histogram<kWaitBuckets> waits_;
  std::size_t slots_ = 0;
  std::size_t queue_capacity_ = 0;
};

}  // namespace corral::server
