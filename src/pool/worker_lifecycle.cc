// src/pool/worker_lifecycle.cc: a worker from spawn to reap.
//
// Spawn (with its start timeout), retirement (by memory growth, or spread
// over 90-100% of retire_after_executions with a standby successor started
// ahead), polite stop and kill, which failure a dying worker's runs get,
// reaping through the pidfd, and the pool's drain and shutdown.
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "corral/pool.hpp"
#include "pool/pool_impl.hpp"
#include "pool/worker.hpp"
#include "pool/worker_exit.hpp"
#include "pool/worker_process.hpp"

namespace corral::pool {

namespace {

// When a worker retires: between 90% and 100% of retire_after (never
// more), spread by the worker's number so that workers started together
// do not all retire, and leave their slots empty, at the same moment.
std::uint64_t retirement_count(std::uint64_t retire_after, std::uint64_t worker_number) {
  const double spread = std::fmod(static_cast<double>(worker_number) * 0.6180339887, 1.0);
  const auto early = static_cast<std::uint64_t>(static_cast<double>(retire_after) * 0.1 * spread);
  return std::max<std::uint64_t>(1, retire_after - early);
}

// Workers that retire after this many runs or more get a successor started
// ahead, for their last tenth, so their slot is not empty while a new
// process loads; below it the saving is not worth an extra process.
constexpr std::uint64_t kSuccessorAheadFrom = 20;

}  // namespace

std::shared_ptr<WorkerPool::Impl::Worker> WorkerPool::Impl::spawn(bool speculative) {
  auto worker = std::make_shared<Worker>(io_, options_);
  worker->number = ++next_worker_;
  worker->speculative = speculative;
  worker->retire_at = retirement_count(options_.retire_after_executions, worker->number);
  workers_[worker->number] = worker;
  {
    std::lock_guard lock(stats_mutex_);
    ++stats_.workers_started;
  }
  LaunchedWorker launched;
  try {
    launched = launch_worker(options_);
  } catch (const std::exception& e) {
    spawn_failed(worker, e.what());
    return worker;
  }
  const pid_t pid = launched.pid;
  worker->pid = pid;
  worker->socket.assign(asio::local::stream_protocol(), launched.socket);
  worker->pidfd.assign(launched.pidfd);
  worker->stderr_pipe.assign(launched.stderr_fd);
  read_stderr(worker);
  update_gauges();
  emit({.kind = Event::Kind::worker_started, .worker = worker->number, .pid = pid});

  read_next(worker);
  await_reap(worker);
  worker->start_timer.expires_after(options_.start_timeout);
  worker->start_timer.async_wait([this, worker](boost::system::error_code ec) {
    if (ec || worker->state != WorkerState::starting) return;
    kill_worker(worker, WorkerExit::start_failed, "did not become ready in time");
  });
  return worker;
}

// A worker that never got a process: its runs fail now, it leaves at once.
void WorkerPool::Impl::spawn_failed(const std::shared_ptr<Worker>& worker, std::string why) {
  worker->state = WorkerState::dying;
  worker->exit_reason = WorkerExit::start_failed;
  worker->exit_detail = "could not be started: " + why;
  asio::post(io_, [this, worker] { remove(worker, worker->exit_detail); });
}

// Starts the successor of a worker nearing retirement; it waits, ready,
// until the worker leaves service (promote_successor). Once per worker,
// and never past twice max_workers processes.
void WorkerPool::Impl::spawn_successor(const std::shared_ptr<Worker>& worker) {
  if (worker->successor_tried || shutting_down_ ||
      options_.retire_after_executions < kSuccessorAheadFrom ||
      worker->executions + worker->retire_at / 10 < worker->retire_at ||
      live_workers() >= 2 * options_.max_workers)
    return;
  worker->successor_tried = true;
  std::shared_ptr<Worker> successor = spawn(/*speculative=*/true);
  if (successor->state == WorkerState::dying) return;  // could not spawn: no standby
  successor->standby_for = worker->number;
  worker->successor = successor->number;
}

// True when `worker`'s standby has loaded and is waiting for its slot.
bool WorkerPool::Impl::successor_ready(const Worker& worker) const {
  if (worker.successor == 0) return false;
  auto it = workers_.find(worker.successor);
  return it != workers_.end() && it->second->state == WorkerState::ready;
}

// The worker leaves service: its standby, if any, takes runs from now on.
void WorkerPool::Impl::promote_successor(const std::shared_ptr<Worker>& worker) {
  if (worker->successor == 0) return;
  auto it = workers_.find(worker->successor);
  worker->successor = 0;
  if (it == workers_.end()) return;
  it->second->standby_for = 0;
  asio::post(io_, [this] { pump(); });
}

// After one of its runs: true if the worker's private memory is more than
// retire_on_growth above the least it held after any earlier run. Runs still
// in flight on it count too (executions_per_worker > 1): a worker busy with
// big runs may retire early, never late.
bool WorkerPool::Impl::grown_too_much(Worker& worker) {
  if (options_.retire_on_growth == 0) return false;
  const std::uint64_t held = worker.memory.private_bytes(worker.pid);
  if (held == 0) return false;  // gone: its reaping says why
  if (worker.least_after_run == 0 || held < worker.least_after_run) {
    worker.least_after_run = held;
    return false;
  }
  return held - worker.least_after_run > options_.retire_on_growth;
}

// After one of its runs ended: whether the worker leaves service (it said
// it ends, its count is reached, its memory passed the bound, it grew or a
// memory stop), else whether its successor should start loading now.
void WorkerPool::Impl::retire_if_due(const std::shared_ptr<Worker>& worker, bool ending) {
  if (worker->memory_stopped && worker->state == WorkerState::ready) {
    worker->state = WorkerState::retiring;
    worker->exit_reason = WorkerExit::memory_bound;
  }
  if (worker->state == WorkerState::ready) {
    if (ending) {
      // The worker ends itself after this run (a Ruby guest it could
      // not interrupt): no new run may reach it.
      worker->state = WorkerState::retiring;
      worker->exit_reason = WorkerExit::retired;
    } else if (worker->executions >= worker->retire_at || successor_ready(*worker)) {
      // Its count is reached, or it is in its last tenth and its
      // successor is ready to take the slot now.
      worker->state = WorkerState::retiring;
      worker->exit_reason = WorkerExit::retired;
    } else if (worker->memory.bytes(worker->pid) > options_.worker_memory_bound) {
      worker->state = WorkerState::retiring;
      worker->exit_reason = WorkerExit::memory_bound;
    } else if (grown_too_much(*worker)) {
      worker->state = WorkerState::retiring;
      worker->exit_reason = WorkerExit::retired;
    } else {
      spawn_successor(worker);
    }
    if (worker->state == WorkerState::retiring) promote_successor(worker);
  }
  if (worker->state == WorkerState::retiring && worker->running.empty()) {
    stop_worker(worker);
  }
}

void WorkerPool::Impl::after_settle() {
  pump();
  if (shutting_down_ && !terminating_ && running_count() == 0) terminate_all();
}

std::size_t WorkerPool::Impl::running_count() const {
  std::size_t n = 0;
  for (const auto& [number, worker] : workers_) n += worker->running.size();
  return n;
}

// Politely: close its socket (it exits on EOF), SIGTERM, then SIGKILL.
void WorkerPool::Impl::stop_worker(const std::shared_ptr<Worker>& worker) {
  if (worker->state == WorkerState::dying) return;
  worker->state = WorkerState::dying;
  promote_successor(worker);
  boost::system::error_code ignored;
  worker->socket.close(ignored);
  signal(worker, SIGTERM);
  worker->kill_timer.expires_after(options_.termination_delay);
  worker->kill_timer.async_wait([this, worker](boost::system::error_code ec) {
    if (!ec && !worker->reaped) signal(worker, SIGKILL);
  });
  fail_runs(worker);
}

// At once: a worker we no longer trust, or that is gone already.
void WorkerPool::Impl::kill_worker(const std::shared_ptr<Worker>& worker, WorkerExit reason,
                                   std::string why) {
  // A worker that dies before it said it was ready never started.
  if (reason == WorkerExit::crashed && worker->state == WorkerState::starting) {
    reason = WorkerExit::start_failed;
    why = "could not start: it " + why + " before it was ready";
  }
  if (!worker->exit_reason) worker->exit_reason = reason;
  if (worker->exit_detail.empty()) worker->exit_detail = std::move(why);
  if (worker->state == WorkerState::dying) return;
  worker->state = WorkerState::dying;
  promote_successor(worker);
  worker->start_timer.cancel();
  boost::system::error_code ignored;
  worker->socket.close(ignored);
  signal(worker, SIGKILL);
  fail_runs(worker);
}

void WorkerPool::Impl::signal(const std::shared_ptr<Worker>& worker, int sig) {
  if (worker->reaped || !worker->pidfd.is_open()) return;
  ::syscall(SYS_pidfd_send_signal, worker->pidfd.native_handle(), sig, nullptr, 0);
}

// Every run still on a dying worker fails: retryably, unless the worker
// could not start at all (then retrying soon won't help).
void WorkerPool::Impl::fail_runs(const std::shared_ptr<Worker>& worker) {
  if (worker->running.empty()) return;
  if (worker->exit_reason == WorkerExit::start_failed && worker->speculative && !shutting_down_) {
    // A successor that took runs when its predecessor retired, and then
    // could not start: they never ran, so they wait again, first in line.
    // Only once: the next worker is not a successor, and its failure
    // fails them (a binary that cannot start must not spin).
    auto running = std::move(worker->running);
    worker->running.clear();
    for (auto it = running.rbegin(); it != running.rend(); ++it) {
      it->second->worker = nullptr;
      queue_.push_front(it->second);
    }
    asio::post(io_, [this] { after_settle(); });
    return;
  }
  FailureCode code = worker->exit_reason == WorkerExit::start_failed
                         ? FailureCode::unavailable
                         : FailureCode::connection_broken;
  // A worker that faulted while it held one run alone was crashed by
  // that run: the same run would crash a worker anywhere, so it is not
  // retryable. With other runs beside it the culprit is unknown, and the
  // others would succeed again: they stay connection_broken.
  const bool crashed_by_the_run = worker->exit_reason == WorkerExit::crashed &&
                                  worker->running.size() == 1 && is_fault(worker->death_signal);
  if (crashed_by_the_run) code = FailureCode::internal;
  std::string what;
  if (worker->exit_reason == WorkerExit::start_failed) {
    what = (worker->exit_detail.empty() ? std::string("could not start") : worker->exit_detail);
  } else if (worker->exit_reason == WorkerExit::shutdown) {
    what = "was shut down during the execution";
  } else {
    what = (worker->exit_detail.empty() ? std::string("died") : worker->exit_detail) +
           " during the execution";
    if (crashed_by_the_run) what += ", the only run it held: the same run would crash it again";
  }
  auto running = std::move(worker->running);
  worker->running.clear();
  for (auto& [ticket, pending] : running) {
    if (!pending->memory_verdict.empty()) {
      settle(pending, Outcome(make_failure(FailureCode::memory_limit, pending->memory_verdict)));
      continue;
    }
    settle(pending,
           Outcome(make_failure(code, "worker " + std::to_string(worker->number) + " " + what)));
  }
  asio::post(io_, [this] { after_settle(); });
}

// The pidfd turns readable when the worker's process exits.
void WorkerPool::Impl::await_reap(const std::shared_ptr<Worker>& worker) {
  worker->pidfd.async_wait(asio::posix::stream_descriptor::wait_read,
                           [this, worker](boost::system::error_code ec) {
                             if (!ec) reap(worker);
                           });
}

void WorkerPool::Impl::reap(const std::shared_ptr<Worker>& worker) {
  int status = 0;
  const pid_t reaped = ::waitpid(worker->pid, &status, WNOHANG);
  if (reaped == 0) {
    // Still running: the wait completed for readiness that was not this
    // pidfd's. asio's epoll reactor hands a closed descriptor's state to
    // the next one registered, and readiness already collected for the old
    // descriptor is then performed on the new one's operations: a worker
    // killed while its socket and pidfd were both ready, replaced from
    // within the handler, gave its successor's pidfd a completed wait,
    // and the successor was taken for dead before it was ready
    // ("exited with status 0"). A wait is only a hint; waitpid says.
    await_reap(worker);
    return;
  }
  if (reaped < 0) {
    // Not ours to reap (someone else waited): treat it as gone anyway.
    status = 0;
  }
  worker->reaped = true;
  worker->death_signal = death_signal(status);
  worker->kill_timer.cancel();
  worker->start_timer.cancel();
  worker->memory_timer.cancel();
  if (WIFEXITED(status) && WEXITSTATUS(status) == kOutOfMemoryExit &&
      worker->state != WorkerState::dying) {
    for (auto& [ticket, pending] : worker->running) {
      if (!pending->memory_verdict.empty()) continue;
      pending->memory_verdict =
          "the run exceeded its memory limit: worker " + std::to_string(worker->number) +
          " ran out of memory" +
          (options_.worker_memory_ceiling
               ? " at its ceiling of " + std::to_string(options_.worker_memory_ceiling) + " bytes"
               : std::string());
    }
    kill_worker(worker, WorkerExit::memory_bound, "ran out of memory");
  }
  if (worker->state != WorkerState::dying) {
    kill_worker(worker, WorkerExit::crashed, describe_status(status));
  }
  remove(worker, describe_status(status));
}

void WorkerPool::Impl::remove(const std::shared_ptr<Worker>& worker, const std::string& how) {
  worker->state = WorkerState::dying;
  fail_runs(worker);
  boost::system::error_code ignored;
  worker->socket.close(ignored);
  worker->pidfd.close(ignored);
  worker->memory.close();
  promote_successor(worker);
  if (workers_.erase(worker->number) == 0) return;
  const WorkerExit reason = worker->exit_reason.value_or(WorkerExit::crashed);
  {
    std::lock_guard lock(stats_mutex_);
    ++stats_.worker_exits[static_cast<int>(reason)];
  }
  update_gauges();
  emit({.kind = Event::Kind::worker_exited,
        .worker = worker->number,
        .pid = worker->pid,
        .exit = reason});
  // Requests that waited on a worker that never started fail rather than
  // spin on a binary that cannot run. A standby's failure is not that:
  // the worker it would have replaced is still serving them.
  if (reason == WorkerExit::start_failed && !worker->speculative) {
    while (!queue_.empty()) {
      std::shared_ptr<Pending> pending = queue_.front();
      queue_.pop_front();
      settle(pending,
             Outcome(make_failure(FailureCode::unavailable,
                                  "worker " + std::to_string(worker->number) + " " + how)));
    }
  }
  if (terminating_ && workers_.empty()) finish_shutdown();
  after_settle();
}

void WorkerPool::Impl::shutdown_on_loop(std::chrono::milliseconds drain,
                                        std::function<void()> done) {
  if (shutdown_finished_) {
    if (done) done();
    return;
  }
  if (done) shutdown_waiters_.push_back(std::move(done));
  if (shutting_down_) return;
  shutting_down_ = true;
  while (!queue_.empty()) {
    std::shared_ptr<Pending> pending = queue_.front();
    queue_.pop_front();
    reject(pending, Rejection::shutting_down);
  }
  update_gauges();
  if (running_count() == 0) {
    terminate_all();
    return;
  }
  drain_timer_ = std::make_unique<asio::steady_timer>(io_);
  drain_timer_->expires_after(std::max(drain, std::chrono::milliseconds::zero()));
  drain_timer_->async_wait([this](boost::system::error_code ec) {
    if (!ec && !terminating_) terminate_all();
  });
}

void WorkerPool::Impl::terminate_all() {
  terminating_ = true;
  if (drain_timer_) drain_timer_->cancel();
  if (workers_.empty()) {
    finish_shutdown();
    return;
  }
  auto workers = workers_;
  for (auto& [number, worker] : workers) {
    if (!worker->exit_reason) worker->exit_reason = WorkerExit::shutdown;
    if (worker->state != WorkerState::dying) {
      stop_worker(worker);
    }
  }
}

void WorkerPool::Impl::finish_shutdown() {
  if (shutdown_finished_) return;
  shutdown_finished_ = true;
  auto waiters = std::move(shutdown_waiters_);
  for (auto& done : waiters) {
    try {
      done();
    } catch (...) {
    }
  }
}

}  // namespace corral::pool
