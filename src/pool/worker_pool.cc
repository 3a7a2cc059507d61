// src/pool/worker_pool.cc: the WorkerPool facade, Options validation, and
// the Impl's public entry points (each posts onto the pool's thread).
// The Impl's work is in files by role: admission.cc, run_watch.cc,
// worker_channel.cc, worker_lifecycle.cc, outcomes.cc (pool_impl.hpp).
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "core/units.hpp"
#include "corral/pool.hpp"
#include "pool/pool_impl.hpp"
#include "pool/worker_process.hpp"

namespace corral::pool {
std::string_view to_string(WorkerExit exit) noexcept {
  switch (exit) {
    case WorkerExit::retired:
      return "retired";
    case WorkerExit::memory_bound:
      return "memory_bound";
    case WorkerExit::crashed:
      return "crashed";
    case WorkerExit::hung:
      return "hung";
    case WorkerExit::protocol_error:
      return "protocol_error";
    case WorkerExit::start_failed:
      return "start_failed";
    case WorkerExit::shutdown:
      return "shutdown";
  }
  return "crashed";
}

std::string_view to_string(Rejection rejection) noexcept {
  switch (rejection) {
    case Rejection::queue_overflow:
      return "queue_overflow";
    case Rejection::shutting_down:
      return "shutting_down";
  }
  return "queue_overflow";
}

void validate(const Options& options) {
  if (options.executions_per_worker == 0)
    throw std::invalid_argument("executions_per_worker: must be at least 1");
  if (options.retire_after_executions == 0)
    throw std::invalid_argument("retire_after_executions: must be at least 1");
  if (options.worker_memory_bound == 0)
    throw std::invalid_argument("worker_memory_bound: must be at least 1");
  core::check_bound(options.grace, "grace");
  core::check_bound(options.memory_watch_interval, "memory_watch_interval");
  core::check_bound(options.memory_stop_grace, "memory_stop_grace");
  core::check_bound(options.termination_delay, "termination_delay");
  core::check_bound(options.start_timeout, "start_timeout");
  if (options.max_frame < 1024) throw std::invalid_argument("max_frame: must be at least 1024");
  if (options.max_frame > 0xffffffffu)
    throw std::invalid_argument("max_frame: must fit in 32 bits");
}
WorkerPool::Impl::Impl(Options options) : options_(std::move(options)), work_(io_.get_executor()) {
  validate(options_);
  if (options_.max_workers == 0)
    options_.max_workers = std::max(1u, std::thread::hardware_concurrency());
  if (options_.worker_command.empty()) options_.worker_command = default_worker_command();
  thread_ = std::thread([this] { io_.run(); });
}

void WorkerPool::Impl::stop() {
  work_.reset();
  io_.stop();
  if (thread_.joinable()) thread_.join();
}

Ticket WorkerPool::Impl::submit(Request request, Completion done) {
  const Ticket ticket = next_ticket_.fetch_add(1) + 1;
  {
    std::lock_guard lock(live_mutex_);
    live_.insert(ticket);
  }
  auto pending = std::make_shared<Pending>();
  pending->ticket = ticket;
  pending->request = std::move(request);
  pending->done = std::move(done);
  asio::post(io_, [this, pending] { admit(pending); });
  return ticket;
}

bool WorkerPool::Impl::cancel(Ticket ticket) {
  {
    std::lock_guard lock(live_mutex_);
    if (!live_.contains(ticket)) return false;
  }
  asio::post(io_, [this, ticket] { cancel_on_loop(ticket); });
  return true;
}

void WorkerPool::Impl::shutdown(std::chrono::milliseconds drain, std::function<void()> done) {
  asio::post(io_, [this, drain, done = std::move(done)]() mutable {
    shutdown_on_loop(drain, std::move(done));
  });
}

Stats WorkerPool::Impl::stats() const {
  std::lock_guard lock(stats_mutex_);
  return stats_;
}

std::uint64_t WorkerPool::Impl::subscribe(Listener listener) {
  std::lock_guard lock(listeners_mutex_);
  const std::uint64_t id = ++next_listener_;
  listeners_.emplace(id, std::move(listener));
  return id;
}

void WorkerPool::Impl::unsubscribe(std::uint64_t id) {
  std::lock_guard lock(listeners_mutex_);
  listeners_.erase(id);
}

bool WorkerPool::Impl::answer(const std::shared_ptr<ToolAnswer::State>& state, bool ok,
                              std::string payload) {
  if (state->answered.exchange(true)) return false;
  {
    std::lock_guard lock(live_mutex_);
    if (!live_.contains(state->ticket)) return false;
  }
  asio::post(io_, [this, state, ok, payload = std::move(payload)]() mutable {
    deliver_answer(*state, ok, std::move(payload));
  });
  return true;
}

bool ToolAnswer::resolve(std::string json) const {
  std::shared_ptr<WorkerPool::Impl> pool = state_->pool.lock();
  return pool && pool->answer(state_, true, std::move(json));
}

bool ToolAnswer::reject(std::string message) const {
  std::shared_ptr<WorkerPool::Impl> pool = state_->pool.lock();
  return pool && pool->answer(state_, false, std::move(message));
}

WorkerPool::WorkerPool(Options options) : impl_(std::make_shared<Impl>(std::move(options))) {}

WorkerPool::~WorkerPool() {
  if (impl_->on_pool_thread()) std::terminate();  // a completion destroyed its own pool
  shutdown(std::chrono::seconds(0));
  impl_->stop();
}

Ticket WorkerPool::submit(Request request, Completion done) {
  return impl_->submit(std::move(request), std::move(done));
}

Outcome WorkerPool::execute(Request request) {
  if (impl_->on_pool_thread())
    throw std::logic_error("WorkerPool::execute called on the pool's own thread");
  std::promise<Outcome> promise;
  std::future<Outcome> future = promise.get_future();
  submit(std::move(request),
         [&promise](Outcome outcome) { promise.set_value(std::move(outcome)); });
  return future.get();
}

bool WorkerPool::cancel(Ticket ticket) { return impl_->cancel(ticket); }

void WorkerPool::shutdown(std::chrono::milliseconds drain, std::function<void()> done) {
  impl_->shutdown(drain, std::move(done));
}

void WorkerPool::shutdown(std::chrono::milliseconds drain) {
  if (impl_->on_pool_thread())
    throw std::logic_error("WorkerPool::shutdown(drain) called on the pool's own thread");
  std::promise<void> promise;
  std::future<void> future = promise.get_future();
  impl_->shutdown(drain, [&promise] { promise.set_value(); });
  future.get();
}

Stats WorkerPool::stats() const { return impl_->stats(); }
const Options& WorkerPool::options() const noexcept { return impl_->options(); }
std::uint64_t WorkerPool::subscribe(Listener listener) {
  return impl_->subscribe(std::move(listener));
}
void WorkerPool::unsubscribe(std::uint64_t id) { impl_->unsubscribe(id); }

}  // namespace corral::pool
