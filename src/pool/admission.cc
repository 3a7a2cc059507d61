// src/pool/admission.cc: a request from submit to a worker's slot.
//
// Admission checks the limits and encodes the run frame once (refusing one
// over max_frame as invalid_request), hands it to a free slot, queues it up
// to max_queue, or rejects it (queue_overflow, shutting_down). Room counts
// workers in service; a standby takes a slot before a cold start does.
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "corral/pool.hpp"
#include "pool/pool_impl.hpp"

namespace corral::pool {

void WorkerPool::Impl::admit(const std::shared_ptr<Pending>& pending) {
  if (shutting_down_) {
    reject(pending, Rejection::shutting_down);
    return;
  }
  try {
    sandbox::validate(pending->request.limits);
  } catch (const std::invalid_argument& e) {
    settle(pending, Outcome(make_failure(FailureCode::invalid_request, e.what())));
    return;
  }
  // A frame the worker would refuse (and exit on) fails here, once: on
  // any worker it would be as large, so it is not retryable.
  pending->run_frame = encode_frame(run_message(*pending));
  if (const std::size_t size = pending->run_frame.size() - kFrameHeaderBytes;
      size > options_.max_frame) {
    pending->run_frame.clear();
    pending->run_frame.shrink_to_fit();
    settle(pending, Outcome(make_failure(FailureCode::invalid_request,
                                         too_large("the run (its code and tool names)", size))));
    return;
  }
  if (std::shared_ptr<Worker> worker = free_worker()) {
    start(pending, worker);
    return;
  }
  if (queue_.size() < options_.max_queue) {
    queue_.push_back(pending);
    update_gauges();
    emit({.kind = Event::Kind::queued});
    return;
  }
  reject(pending, Rejection::queue_overflow);
}

void WorkerPool::Impl::reject(const std::shared_ptr<Pending>& pending, Rejection rejection) {
  {
    std::lock_guard lock(stats_mutex_);
    ++stats_.rejections[static_cast<int>(rejection)];
  }
  emit({.kind = Event::Kind::rejected, .rejection = rejection});
  if (rejection == Rejection::queue_overflow) {
    finish(pending, Outcome(make_failure(FailureCode::queue_overflow,
                                         "every worker is busy and the queue of " +
                                             std::to_string(options_.max_queue) + " is full")));
  } else {
    finish(pending, Outcome(make_failure(FailureCode::unavailable, "the pool is shutting down")));
  }
}

// Workers not being stopped: in service, retiring or standing by. At most
// twice max_workers; the ones being stopped are gone within the
// termination delay.
std::size_t WorkerPool::Impl::live_workers() const {
  std::size_t n = 0;
  for (const auto& [number, worker] : workers_) n += worker->state != WorkerState::dying;
  return n;
}

// A worker with a free slot, spawning one if there is room; null if none.
// Room counts the workers in service: a dying one (retired, say) still
// exiting does not hold its slot, and a standby is not in service.
std::shared_ptr<WorkerPool::Impl::Worker> WorkerPool::Impl::free_worker() {
  std::shared_ptr<Worker> starting;
  std::shared_ptr<Worker> standby;
  std::size_t in_service = 0;
  for (auto& [number, worker] : workers_) {
    if (worker->state == WorkerState::dying) continue;
    if (worker->standby_for != 0) {
      if (!standby) standby = worker;
      continue;
    }
    ++in_service;
    if (worker->running.size() >= options_.executions_per_worker) continue;
    if (worker->state == WorkerState::ready) {
      // An idle worker is checked before it is handed a run: one that was
      // stopped while idle is replaced, and the run waits for a worker
      // that will run it instead of timing out on one that never could.
      if (worker->running.empty() && worker->memory.stopped(worker->pid)) {
        kill_worker(worker, WorkerExit::crashed, "was found stopped while idle");
        continue;
      }
      return worker;
    }
    if (worker->state == WorkerState::starting && !starting) starting = worker;
  }
  if (starting) return starting;
  if (in_service >= options_.max_workers) return nullptr;
  if (standby) {
    // A free slot and a standby already loading or loaded: it takes the
    // slot rather than a cold start; its predecessor goes on without one.
    if (auto it = workers_.find(standby->standby_for); it != workers_.end())
      it->second->successor = 0;
    standby->standby_for = 0;
    return standby;
  }
  if (live_workers() < 2 * options_.max_workers) return spawn();
  return nullptr;
}

void WorkerPool::Impl::pump() {
  while (!queue_.empty() && !shutting_down_) {
    std::shared_ptr<Worker> worker = free_worker();
    if (!worker) break;
    std::shared_ptr<Pending> pending = queue_.front();
    queue_.pop_front();
    start(pending, worker);
  }
  update_gauges();
}

// Why a frame of `size` bytes is not sent: "<what> is N bytes as a frame, ...".
std::string WorkerPool::Impl::too_large(std::string_view what, std::size_t size) const {
  return core::frame_too_large(what, size, "the pool's frame limit (max_frame)",
                               options_.max_frame);
}

json::object WorkerPool::Impl::run_message(const Pending& pending) {
  const Request& request = pending.request;
  json::array tools;
  for (const std::string& name : request.tools) tools.emplace_back(name);
  return json::object{{"t", "run"},
                      {"id", pending.ticket},
                      {"shape", request.shape == Request::Shape::eval ? "eval" : "execute"},
                      {"code", request.code},
                      {"tools", std::move(tools)},
                      {"limits", limits_to_object(request.limits)}};
}

void WorkerPool::Impl::start(const std::shared_ptr<Pending>& pending,
                             const std::shared_ptr<Worker>& worker) {
  pending->worker = worker;
  pending->started = Clock::now();
  if (worker->running.empty() && worker->state == WorkerState::ready) {
    worker->memory_baseline = worker->memory.private_bytes(worker->pid);
  }
  worker->running[pending->ticket] = pending;
  // Sent once; a run put back in line (its worker never started) is
  // encoded again.
  std::string frame = std::exchange(pending->run_frame, std::string());
  write_frame(worker, frame.empty() ? encode_frame(run_message(*pending)) : std::move(frame));
  if (worker->state == WorkerState::ready) {
    arm_backstop(pending);
    watch_memory();
  }
  update_gauges();
  if (pending->request.on_start) {
    pending->request.on_start(worker->number, pending->started - pending->submitted);
  }
  emit({.kind = Event::Kind::execution_started,
        .worker = worker->number,
        .ticket = pending->ticket,
        .pid = worker->pid,
        .duration = pending->started - pending->submitted});
}

void WorkerPool::Impl::cancel_on_loop(Ticket ticket) {
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if ((*it)->ticket == ticket) {
      std::shared_ptr<Pending> pending = *it;
      queue_.erase(it);
      settle(pending, Outcome(make_failure(FailureCode::cancelled, "cancelled before it started")));
      update_gauges();
      return;
    }
  }
  for (auto& [number, worker] : workers_) {
    if (worker->running.contains(ticket)) {
      write(worker, json::object{{"t", "cancel"}, {"id", ticket}});
      return;
    }
  }
}

}  // namespace corral::pool
