// src/sandbox/watchdog.hpp: one process-wide thread that fires deadlines.
//
// Runs arm a deadline with a callback (which terminates the guest); the
// watchdog calls it once when the deadline passes. `disarm` returns only
// when the callback is not running and never will, so a run can release the
// state its callback touches right after disarming.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace corral::sandbox {

class Watchdog {
 public:
  using Clock = std::chrono::steady_clock;
  using Id = std::uint64_t;

  // The shared instance; its thread starts on first use and lives as long as
  // the process.
  static Watchdog& instance();

  Id arm(Clock::time_point deadline, std::function<void()> on_expiry);
  void disarm(Id id);

 private:
  Watchdog();
  void loop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::multimap<Clock::time_point, std::pair<Id, std::function<void()>>> deadlines_;
  Id next_id_ = 1;
  // When the thread will wake by itself (max: only when notified). arm()
  // notifies only for a deadline earlier than this.
  Clock::time_point sleeping_until_ = Clock::time_point::max();
  std::thread thread_;
};

}  // namespace corral::sandbox
