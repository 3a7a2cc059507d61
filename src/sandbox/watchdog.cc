#include "sandbox/watchdog.hpp"

namespace corral::sandbox {

Watchdog& Watchdog::instance() {
  // Leaked on purpose: the thread must outlive every sandbox, including ones
  // destroyed during static destruction.
  static Watchdog* watchdog = new Watchdog();
  return *watchdog;
}

Watchdog::Watchdog() : thread_([this] { loop(); }) { thread_.detach(); }

Watchdog::Id Watchdog::arm(Clock::time_point deadline, std::function<void()> on_expiry) {
  std::lock_guard lock(mutex_);
  const Id id = next_id_++;
  deadlines_.emplace(deadline, std::make_pair(id, std::move(on_expiry)));
  // The thread only needs waking when it would sleep past the new deadline.
  // Disarmed deadlines leave it asleep until their time (it then finds them
  // gone), so back-to-back runs, each with a later deadline, never wake it.
  if (deadline < sleeping_until_) {
    sleeping_until_ = deadline;
    wake_.notify_one();
  }
  return id;
}

void Watchdog::disarm(Id id) {
  // The callback runs under mutex_, so once we hold it the callback is
  // either finished or will never start for this id.
  std::lock_guard lock(mutex_);
  for (auto it = deadlines_.begin(); it != deadlines_.end(); ++it) {
    if (it->second.first == id) {
      deadlines_.erase(it);
      return;
    }
  }
}

void Watchdog::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (deadlines_.empty()) {
      // Keep sleeping towards the last deadline asked for (maybe disarmed
      // since): arm() wakes us only for an earlier one.
      if (sleeping_until_ == Clock::time_point::max() || Clock::now() >= sleeping_until_) {
        sleeping_until_ = Clock::time_point::max();
        wake_.wait(lock);
      } else {
        wake_.wait_until(lock, sleeping_until_);
      }
      continue;
    }
    auto first = deadlines_.begin();
    // Copy the deadline: disarm() may erase its node while we wait.
    const Clock::time_point next = first->first;
    if (Clock::now() < next) {
      sleeping_until_ = next;
      wake_.wait_until(lock, next);
      continue;
    }
    auto callback = std::move(first->second.second);
    deadlines_.erase(first);
    callback();
  }
}

}  // namespace corral::sandbox
