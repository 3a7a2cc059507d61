// src/pool/run_watch.cc: what the pool watches from outside while runs
// are in flight: the backstop at timeout + grace, and the worker's memory.
//
// A run's memory_limit is counted by its engine inside the worker, which
// cannot see what the engine or corral allocate outside the guest's heap.
// The pool measures the worker from outside: while runs are in flight it
// reads the worker's resident memory every memory_watch_interval, and a
// worker past its baseline plus its runs' limits plus run_memory_overhead
// has its runs stopped (they end as memory_limit, keeping their output)
// and, memory_stop_grace later, is killed if it has not answered. It
// retires either way: its heap is not what a fresh worker's is.
#include <memory>
#include <string>
#include <utility>

#include "core/units.hpp"
#include "corral/pool.hpp"
#include "pool/pool_impl.hpp"

namespace corral::pool {

namespace {

// AddressSanitizer keeps freed memory in quarantine (256 MiB by default)
// and its shadow grows with the heap: a sanitizer build's workers grow that
// much more with no guest to blame.
#if defined(__SANITIZE_ADDRESS__)
constexpr std::uint64_t kSanitizerMemorySlack = std::uint64_t{512} << 20;
#else
constexpr std::uint64_t kSanitizerMemorySlack = 0;
#endif

}  // namespace

void WorkerPool::Impl::watch_memory() {
  if (memory_watching_ || running_count() == 0) return;
  memory_watching_ = true;
  memory_watch_.expires_after(options_.memory_watch_interval);
  memory_watch_.async_wait([this](boost::system::error_code ec) {
    memory_watching_ = false;
    if (ec) return;
    check_memory();
    watch_memory();
  });
}

void WorkerPool::Impl::check_memory() {
  for (auto& [number, worker] : workers_) {
    if (worker->running.empty() || worker->memory_stopped ||
        worker->state == WorkerState::starting || worker->state == WorkerState::dying) {
      continue;
    }
    std::uint64_t allowed =
        worker->memory_baseline + options_.run_memory_overhead + kSanitizerMemorySlack;
    bool bounded = true;
    for (const auto& [ticket, pending] : worker->running) {
      if (!pending->request.limits.memory_limit) bounded = false;
      allowed += pending->request.limits.memory_limit.value_or(0);
    }
    if (!bounded) continue;
    const std::uint64_t held = worker->memory.private_bytes(worker->pid);
    if (held > allowed) stop_for_memory(worker, held, allowed);
  }
}

void WorkerPool::Impl::stop_for_memory(const std::shared_ptr<Worker>& worker, std::uint64_t held,
                                       std::uint64_t allowed) {
  worker->memory_stopped = true;
  constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
  for (auto& [ticket, pending] : worker->running) {
    const std::uint64_t limit = *pending->request.limits.memory_limit;
    pending->memory_verdict = "the run exceeded its memory limit of " + std::to_string(limit) +
                              " bytes: worker " + std::to_string(worker->number) + " held " +
                              std::to_string(held / kMiB) + " MiB, past the " +
                              std::to_string(allowed / kMiB) + " MiB its runs may hold";
    write(worker, json::object{{"t", "cancel"}, {"id", ticket}});
  }
  worker->memory_timer.expires_after(options_.memory_stop_grace);
  worker->memory_timer.async_wait([this, worker](boost::system::error_code ec) {
    if (ec || worker->state == WorkerState::dying || worker->running.empty()) return;
    for (auto& [ticket, pending] : worker->running) {
      pending->memory_verdict += " (it did not stop in time and was killed)";
    }
    kill_worker(worker, WorkerExit::memory_bound,
                "was killed: its runs passed their memory limits and it did not stop them");
  });
}

// What a run stopped for memory ends in, whatever its worker answered.
Outcome WorkerPool::Impl::memory_outcome(const Pending& pending, Outcome answered) {
  std::shared_ptr<const Execution> execution;
  const ExecutionData* data = nullptr;
  if (answered.ok()) {
    data = &answered.execution().data();
  } else if (answered.failure().execution) {
    data = &answered.failure().execution->data();
  }
  if (data) {
    ExecutionData kept = *data;
    kept.failed = true;
    kept.value = "null";
    execution = std::make_shared<const Execution>(std::move(kept));
  }
  return Outcome(Failure{FailureCode::memory_limit, pending.memory_verdict, std::move(execution)});
}

void WorkerPool::Impl::arm_backstop(const std::shared_ptr<Pending>& pending) {
  const auto& timeout = pending->request.limits.timeout;
  if (!timeout || pending->backstop) return;
  pending->backstop = std::make_unique<asio::steady_timer>(io_);
  pending->backstop->expires_after(*timeout + options_.grace);
  std::weak_ptr<Pending> weak = pending;
  pending->backstop->async_wait([this, weak](boost::system::error_code ec) {
    std::shared_ptr<Pending> p = weak.lock();
    if (ec || !p || p->settled || !p->worker) return;
    std::shared_ptr<Worker> worker = p->worker;
    // The hung run itself failed by its timeout; other runs on that worker
    // fail as broken connections when it dies.
    settle(p, Outcome(make_failure(FailureCode::timeout,
                                   "the run exceeded its timeout of " +
                                       core::format_duration(*p->request.limits.timeout) +
                                       "; worker " + std::to_string(worker->number) +
                                       " did not stop it and was killed")));
    worker->running.erase(p->ticket);
    kill_worker(worker, WorkerExit::hung, "was killed after missing a run's timeout");
  });
}

}  // namespace corral::pool
