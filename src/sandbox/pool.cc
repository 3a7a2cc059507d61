#include <condition_variable>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "core/units.hpp"
#include "corral/sandbox.hpp"

namespace corral::sandbox {

struct Pool::State {
  std::optional<std::chrono::milliseconds> checkout_timeout;
  Factory factory;
  std::mutex mutex;
  std::condition_variable returned;
  std::deque<std::unique_ptr<Sandbox>> idle;
  std::size_t built = 0;  // sandboxes alive (idle or leased)
  std::uint64_t discarded = 0;
};

Pool::Pool(std::size_t slots, std::optional<std::chrono::milliseconds> checkout_timeout,
           Factory factory)
    : slots_(slots), state_(std::make_unique<State>()) {
  if (slots == 0) throw std::invalid_argument("slots must be a positive integer");
  if (checkout_timeout) core::check_bound(*checkout_timeout, "checkout_timeout");
  if (!factory) throw std::invalid_argument("factory must be set");
  state_->checkout_timeout = checkout_timeout;
  state_->factory = std::move(factory);
}

Pool::~Pool() = default;

Pool::Lease Pool::checkout() {
  std::unique_lock lock(state_->mutex);
  auto available = [&] { return !state_->idle.empty() || state_->built < slots_; };
  if (state_->checkout_timeout) {
    if (!state_->returned.wait_for(lock, *state_->checkout_timeout, available)) {
      throw CapacityError(FailureCode::busy, "every sandbox in the pool stayed checked out for " +
                                                 core::format_duration(*state_->checkout_timeout));
    }
  } else {
    state_->returned.wait(lock, available);
  }
  if (!state_->idle.empty()) {
    auto sandbox = std::move(state_->idle.front());
    state_->idle.pop_front();
    return Lease(this, std::move(sandbox));
  }
  ++state_->built;
  lock.unlock();
  try {
    return Lease(this, state_->factory());
  } catch (...) {
    std::lock_guard relock(state_->mutex);
    --state_->built;
    state_->returned.notify_one();
    throw;
  }
}

void Pool::give_back(std::unique_ptr<Sandbox> sandbox) {
  std::lock_guard lock(state_->mutex);
  if (!sandbox || sandbox->last_run_trapped()) {
    // A trapped sandbox is dropped; a new one is built on the next checkout.
    --state_->built;
    if (sandbox) ++state_->discarded;
  } else {
    state_->idle.push_back(std::move(sandbox));
  }
  state_->returned.notify_one();
}

std::uint64_t Pool::discarded() const noexcept {
  std::lock_guard lock(state_->mutex);
  return state_->discarded;
}

Pool::Lease::Lease(Lease&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)), sandbox_(std::move(other.sandbox_)) {}

Pool::Lease::~Lease() {
  if (pool_) pool_->give_back(std::move(sandbox_));
}

}  // namespace corral::sandbox
