// src/pool/outcomes.cc: every admitted run ends here once (settle, counted
// by outcome), every run once (finish, the caller's completion); the
// gauges and the events listeners hear.
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "corral/pool.hpp"
#include "pool/pool_impl.hpp"

namespace corral::pool {

// Settles an execution that was admitted (counted by outcome).
void WorkerPool::Impl::settle(const std::shared_ptr<Pending>& pending, Outcome outcome) {
  if (pending->settled) return;
  pending->settled = true;
  if (pending->backstop) pending->backstop->cancel();
  const std::optional<FailureCode> code =
      outcome.ok() ? std::nullopt : std::optional(outcome.failure().code);
  {
    std::lock_guard lock(stats_mutex_);
    ++stats_.executions[code ? 1 + static_cast<int>(*code) : 0];
  }
  const auto duration = pending->worker ? Clock::now() - pending->started : Clock::duration{};
  emit({.kind = Event::Kind::execution_finished,
        .worker = pending->worker ? pending->worker->number : 0,
        .pid = pending->worker ? pending->worker->pid : 0,
        .outcome = code,
        .duration = duration});
  finish(pending, std::move(outcome));
}

void WorkerPool::Impl::finish(const std::shared_ptr<Pending>& pending, Outcome outcome) {
  pending->settled = true;
  {
    std::lock_guard lock(live_mutex_);
    live_.erase(pending->ticket);
  }
  Completion done = std::move(pending->done);
  // Release the caller's dispatcher with the run: late calls never reach it.
  pending->request.dispatcher = nullptr;
  if (done) {
    try {
      done(std::move(outcome));
    } catch (...) {
      // A completion that throws must not take the pool's thread down.
    }
  }
}

void WorkerPool::Impl::update_gauges() {
  std::lock_guard lock(stats_mutex_);
  stats_.workers_live = workers_.size();
  stats_.queue_depth = queue_.size();
  stats_.executions_running = running_count();
}

void WorkerPool::Impl::emit(const Event& event) {
  if (!options_.instrumented) return;
  std::vector<Listener> listeners;
  {
    std::lock_guard lock(listeners_mutex_);
    if (listeners_.empty()) return;
    for (auto& [id, listener] : listeners_) listeners.push_back(listener);
  }
  for (auto& listener : listeners) {
    try {
      listener(event);
    } catch (...) {
    }
  }
}

}  // namespace corral::pool
