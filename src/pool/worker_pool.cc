// src/pool/worker_pool.cc: WorkerPool on one Asio thread.
//
// Everything that touches workers, the queue and executions runs on the
// pool's own io_context thread; public calls post onto it. Each worker has
// its IPC socket (frames), its pidfd (exit), and per-run backstop timers.
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio.hpp>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>

#include "corral/pool.hpp"
#include "pool/frames.hpp"
#include "pool/resident_memory.hpp"
#include "pool/stderr_lines.hpp"
#include "pool/worker.hpp"
#include "pool/worker_exit.hpp"
#include "pool/worker_process.hpp"

namespace corral::pool {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

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

namespace {

bool positive_finite(std::chrono::duration<double> d) {
  return std::isfinite(d.count()) && d.count() > 0;
}

}  // namespace

void validate(const Options& options) {
  if (options.executions_per_worker == 0)
    throw std::invalid_argument("executions_per_worker: must be at least 1");
  if (options.retire_after_executions == 0)
    throw std::invalid_argument("retire_after_executions: must be at least 1");
  if (options.worker_memory_bound == 0)
    throw std::invalid_argument("worker_memory_bound: must be at least 1");
  if (!positive_finite(options.grace)) throw std::invalid_argument("grace: must be positive");
  if (!positive_finite(options.memory_watch_interval))
    throw std::invalid_argument("memory_watch_interval: must be positive");
  if (!positive_finite(options.memory_stop_grace))
    throw std::invalid_argument("memory_stop_grace: must be positive");
  if (!positive_finite(options.termination_delay))
    throw std::invalid_argument("termination_delay: must be positive");
  if (!positive_finite(options.start_timeout))
    throw std::invalid_argument("start_timeout: must be positive");
  if (options.max_frame < 1024) throw std::invalid_argument("max_frame: must be at least 1024");
  if (options.max_frame > 0xffffffffu)
    throw std::invalid_argument("max_frame: must fit in 32 bits");
}

namespace {

Failure make_failure(FailureCode code, std::string message) {
  return Failure{code, std::move(message), nullptr};
}

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

// AddressSanitizer keeps freed memory in quarantine (256 MiB by default)
// and its shadow grows with the heap: a sanitizer build's workers grow that
// much more with no guest to blame.
#if defined(__SANITIZE_ADDRESS__)
constexpr std::uint64_t kSanitizerMemorySlack = std::uint64_t{512} << 20;
#else
constexpr std::uint64_t kSanitizerMemorySlack = 0;
#endif

}  // namespace

// ToolAnswer's state: which call of which execution on which worker.
struct ToolAnswer::State {
  std::weak_ptr<WorkerPool::Impl> pool;
  std::uint64_t worker = 0;
  Ticket ticket = 0;
  std::uint64_t call = 0;
  std::atomic<bool> answered{false};
};

class WorkerPool::Impl : public std::enable_shared_from_this<WorkerPool::Impl> {
 public:
  explicit Impl(Options options) : options_(std::move(options)), work_(io_.get_executor()) {
    validate(options_);
    if (options_.max_workers == 0)
      options_.max_workers = std::max(1u, std::thread::hardware_concurrency());
    if (options_.worker_command.empty()) options_.worker_command = default_worker_command();
    thread_ = std::thread([this] { io_.run(); });
  }

  ~Impl() { stop(); }

  // Ends the pool's thread. Handlers capture `this`: the thread is joined
  // before the Impl goes, whoever drops the last reference.
  void stop() {
    work_.reset();
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }

  const Options& options() const noexcept { return options_; }
  bool on_pool_thread() const { return std::this_thread::get_id() == thread_.get_id(); }

  Ticket submit(Request request, Completion done) {
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

  bool cancel(Ticket ticket) {
    {
      std::lock_guard lock(live_mutex_);
      if (!live_.contains(ticket)) return false;
    }
    asio::post(io_, [this, ticket] { cancel_on_loop(ticket); });
    return true;
  }

  void shutdown(std::chrono::duration<double> drain, std::function<void()> done) {
    asio::post(io_, [this, drain, done = std::move(done)]() mutable {
      shutdown_on_loop(drain, std::move(done));
    });
  }

  Stats stats() const {
    std::lock_guard lock(stats_mutex_);
    return stats_;
  }

  std::uint64_t subscribe(Listener listener) {
    std::lock_guard lock(listeners_mutex_);
    const std::uint64_t id = ++next_listener_;
    listeners_.emplace(id, std::move(listener));
    return id;
  }

  void unsubscribe(std::uint64_t id) {
    std::lock_guard lock(listeners_mutex_);
    listeners_.erase(id);
  }

  // From any thread, through ToolAnswer.
  bool answer(const std::shared_ptr<ToolAnswer::State>& state, bool ok, std::string payload) {
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

 private:
  struct Worker;

  struct Pending {
    Ticket ticket = 0;
    Request request;
    Completion done;
    std::shared_ptr<Worker> worker;
    Clock::time_point started;
    std::unique_ptr<asio::steady_timer> backstop;
    bool settled = false;
    // Set when its worker's memory passed what its runs may hold: however
    // the run ends now, it ends as memory_limit with this message.
    std::string memory_verdict;
    std::string run_frame;  // encoded at admission, where its size is checked
  };

  enum class WorkerState { starting, ready, retiring, dying };

  struct Worker {
    Worker(asio::io_context& io, const Options& options)
        : socket(io),
          pidfd(io),
          stderr_pipe(io),
          stderr_lines(options.worker_stderr_limit),
          start_timer(io),
          kill_timer(io),
          memory_timer(io),
          reader(options.max_frame) {}
    std::uint64_t number = 0;
    pid_t pid = 0;
    asio::local::stream_protocol::socket socket;
    asio::posix::stream_descriptor pidfd;
    asio::posix::stream_descriptor stderr_pipe;  // the worker's fd 2
    std::array<char, 4096> stderr_buffer{};
    StderrLines stderr_lines;
    asio::steady_timer start_timer;
    asio::steady_timer kill_timer;
    asio::steady_timer memory_timer;  // from a memory stop to the kill
    FrameReader reader;
    std::array<char, 64 * 1024> read_buffer{};
    std::deque<std::string> writes;
    bool writing = false;
    WorkerState state = WorkerState::starting;
    std::map<Ticket, std::shared_ptr<Pending>> running;
    std::uint64_t executions = 0;
    std::uint64_t retire_at = 0;  // retirement_count() for this worker
    // A standby takes no runs until the worker it succeeds leaves service.
    std::uint64_t standby_for = 0;
    std::uint64_t successor = 0;   // started ahead for this worker, if any
    bool successor_tried = false;  // one try per worker: a failed one is not retried
    bool speculative = false;      // spawned as a standby: its failure fails no queue
    ResidentMemory memory;
    // Resident bytes when its current runs began (idle before them): what
    // they may hold is measured from here.
    std::uint64_t memory_baseline = 0;
    bool memory_stopped = false;
    int death_signal = 0;  // once reaped
    std::optional<WorkerExit> exit_reason;
    std::string exit_detail;  // why, for the runs that fail with it
    bool reaped = false;
  };

  // ---- admission and scheduling -------------------------------------------

  void admit(const std::shared_ptr<Pending>& pending) {
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

  void reject(const std::shared_ptr<Pending>& pending, Rejection rejection) {
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
  std::size_t live_workers() const {
    std::size_t n = 0;
    for (const auto& [number, worker] : workers_) n += worker->state != WorkerState::dying;
    return n;
  }

  // A worker with a free slot, spawning one if there is room; null if none.
  // Room counts the workers in service: a dying one (retired, say) still
  // exiting does not hold its slot, and a standby is not in service.
  std::shared_ptr<Worker> free_worker() {
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

  // Starts the successor of a worker nearing retirement; it waits, ready,
  // until the worker leaves service (promote_successor). Once per worker,
  // and never past twice max_workers processes.
  void spawn_successor(const std::shared_ptr<Worker>& worker) {
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
  bool successor_ready(const Worker& worker) const {
    if (worker.successor == 0) return false;
    auto it = workers_.find(worker.successor);
    return it != workers_.end() && it->second->state == WorkerState::ready;
  }

  // The worker leaves service: its standby, if any, takes runs from now on.
  void promote_successor(const std::shared_ptr<Worker>& worker) {
    if (worker->successor == 0) return;
    auto it = workers_.find(worker->successor);
    worker->successor = 0;
    if (it == workers_.end()) return;
    it->second->standby_for = 0;
    asio::post(io_, [this] { pump(); });
  }

  void pump() {
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
  std::string too_large(std::string_view what, std::size_t size) const {
    return std::string(what) + " is " + std::to_string(size) +
           " bytes as a frame, more than the pool's frame limit (max_frame) of " +
           std::to_string(options_.max_frame) + " bytes";
  }

  static json::object run_message(const Pending& pending) {
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

  void start(const std::shared_ptr<Pending>& pending, const std::shared_ptr<Worker>& worker) {
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
    emit({.kind = Event::Kind::execution_started, .worker = worker->number, .pid = worker->pid});
  }

  // ---- memory ---------------------------------------------------------------
  //
  // A run's memory_limit is counted by its engine inside the worker, which
  // cannot see what the engine or corral allocate outside the guest's heap.
  // The pool measures the worker from outside: while runs are in flight it
  // reads the worker's resident memory every memory_watch_interval, and a
  // worker past its baseline plus its runs' limits plus run_memory_overhead
  // has its runs stopped (they end as memory_limit, keeping their output)
  // and, memory_stop_grace later, is killed if it has not answered. It
  // retires either way: its heap is not what a fresh worker's is.

  void watch_memory() {
    if (memory_watching_ || running_count() == 0) return;
    memory_watching_ = true;
    memory_watch_.expires_after(
        std::chrono::duration_cast<Clock::duration>(options_.memory_watch_interval));
    memory_watch_.async_wait([this](boost::system::error_code ec) {
      memory_watching_ = false;
      if (ec) return;
      check_memory();
      watch_memory();
    });
  }

  void check_memory() {
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

  void stop_for_memory(const std::shared_ptr<Worker>& worker, std::uint64_t held,
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
    worker->memory_timer.expires_after(
        std::chrono::duration_cast<Clock::duration>(options_.memory_stop_grace));
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
  static Outcome memory_outcome(const Pending& pending, Outcome answered) {
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
    return Outcome(
        Failure{FailureCode::memory_limit, pending.memory_verdict, std::move(execution)});
  }

  void arm_backstop(const std::shared_ptr<Pending>& pending) {
    const auto& timeout = pending->request.limits.timeout;
    if (!timeout || pending->backstop) return;
    pending->backstop = std::make_unique<asio::steady_timer>(io_);
    pending->backstop->expires_after(
        std::chrono::duration_cast<Clock::duration>(*timeout + options_.grace));
    std::weak_ptr<Pending> weak = pending;
    pending->backstop->async_wait([this, weak](boost::system::error_code ec) {
      std::shared_ptr<Pending> p = weak.lock();
      if (ec || !p || p->settled || !p->worker) return;
      std::shared_ptr<Worker> worker = p->worker;
      // The hung run itself failed by its timeout; other runs on that worker
      // fail as broken connections when it dies.
      settle(p, Outcome(make_failure(FailureCode::timeout,
                                     "the run exceeded its timeout of " +
                                         format_seconds(p->request.limits.timeout->count()) +
                                         "; worker " + std::to_string(worker->number) +
                                         " did not stop it and was killed")));
      worker->running.erase(p->ticket);
      kill_worker(worker, WorkerExit::hung, "was killed after missing a run's timeout");
    });
  }

  static std::string format_seconds(double seconds) {
    std::ostringstream out;
    out << seconds << " s";
    return out.str();
  }

  void cancel_on_loop(Ticket ticket) {
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
      if ((*it)->ticket == ticket) {
        std::shared_ptr<Pending> pending = *it;
        queue_.erase(it);
        settle(pending,
               Outcome(make_failure(FailureCode::cancelled, "cancelled before it started")));
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

  // ---- outcomes -------------------------------------------------------------

  // Settles an execution that was admitted (counted by outcome).
  void settle(const std::shared_ptr<Pending>& pending, Outcome outcome) {
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

  void finish(const std::shared_ptr<Pending>& pending, Outcome outcome) {
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

  // ---- workers ----------------------------------------------------------------

  std::shared_ptr<Worker> spawn(bool speculative = false) {
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
    worker->pidfd.async_wait(asio::posix::stream_descriptor::wait_read,
                             [this, worker](boost::system::error_code ec) {
                               if (!ec) reap(worker);
                             });
    worker->start_timer.expires_after(
        std::chrono::duration_cast<Clock::duration>(options_.start_timeout));
    worker->start_timer.async_wait([this, worker](boost::system::error_code ec) {
      if (ec || worker->state != WorkerState::starting) return;
      kill_worker(worker, WorkerExit::start_failed, "did not become ready in time");
    });
    return worker;
  }

  // A worker that never got a process: its runs fail now, it leaves at once.
  void spawn_failed(const std::shared_ptr<Worker>& worker, std::string why) {
    worker->state = WorkerState::dying;
    worker->exit_reason = WorkerExit::start_failed;
    worker->exit_detail = "could not be started: " + why;
    asio::post(io_, [this, worker] { remove(worker, worker->exit_detail); });
  }

  // ---- a worker's stderr ----------------------------------------------------

  void read_stderr(const std::shared_ptr<Worker>& worker) {
    worker->stderr_pipe.async_read_some(
        asio::buffer(worker->stderr_buffer),
        [this, worker](boost::system::error_code ec, std::size_t n) {
          auto sink = [this, &worker](std::string line) { log_stderr(*worker, std::move(line)); };
          if (ec) {
            worker->stderr_lines.end(sink);
            boost::system::error_code ignored;
            worker->stderr_pipe.close(ignored);
            return;
          }
          worker->stderr_lines.feed(std::string_view(worker->stderr_buffer.data(), n), sink);
          read_stderr(worker);
        });
  }

  void log_stderr(const Worker& worker, std::string line) {
    if (options_.worker_stderr) {
      try {
        options_.worker_stderr(worker.number, worker.pid, line);
      } catch (...) {
        // A sink that throws must not take the pool's thread down.
      }
      return;
    }
    const std::string text = "corral worker " + std::to_string(worker.number) + ": " + line + "\n";
    [[maybe_unused]] const ssize_t ignored = ::write(2, text.data(), text.size());
  }

  void read_next(const std::shared_ptr<Worker>& worker) {
    worker->socket.async_read_some(
        asio::buffer(worker->read_buffer),
        [this, worker](boost::system::error_code ec, std::size_t n) {
          if (ec) {
            if (worker->state != WorkerState::dying) await_exit(worker);
            return;
          }
          worker->reader.append(worker->read_buffer.data(), n);
          std::string body;
          while (worker->state != WorkerState::dying) {
            const FrameReader::Status status = worker->reader.next(body);
            if (status == FrameReader::Status::need_more) break;
            if (status == FrameReader::Status::oversized) {
              kill_worker(worker, WorkerExit::protocol_error, "sent an oversized frame");
              return;
            }
            if (!on_message(worker, body)) {
              kill_worker(worker, WorkerExit::protocol_error, "sent a malformed frame");
              return;
            }
          }
          if (worker->state != WorkerState::dying) read_next(worker);
        });
  }

  // Its connection closed: a worker that ends closes it just before its
  // exit status is known, and the status says why (out of memory is not a
  // crash), so the pool waits a moment for it. One that closed it and
  // lives on is killed.
  void await_exit(const std::shared_ptr<Worker>& worker) {
    if (worker->state == WorkerState::ready) worker->state = WorkerState::retiring;
    worker->kill_timer.expires_after(std::chrono::milliseconds(500));
    worker->kill_timer.async_wait([this, worker](boost::system::error_code ec) {
      if (!ec && !worker->reaped && worker->state != WorkerState::dying) {
        kill_worker(worker, WorkerExit::crashed, "closed its connection");
      }
    });
  }

  void write(const std::shared_ptr<Worker>& worker, const json::object& message) {
    write_frame(worker, encode_frame(message));
  }

  void write_frame(const std::shared_ptr<Worker>& worker, std::string frame) {
    if (worker->state == WorkerState::dying) return;
    worker->writes.push_back(std::move(frame));
    if (!worker->writing) write_next(worker);
  }

  void write_next(const std::shared_ptr<Worker>& worker) {
    if (worker->writes.empty() || worker->state == WorkerState::dying) {
      worker->writing = false;
      return;
    }
    worker->writing = true;
    asio::async_write(worker->socket, asio::buffer(worker->writes.front()),
                      [this, worker](boost::system::error_code ec, std::size_t) {
                        if (ec) {
                          worker->writing = false;
                          if (worker->state != WorkerState::dying) await_exit(worker);
                          return;
                        }
                        worker->writes.pop_front();
                        write_next(worker);
                      });
  }

  // False for anything the protocol does not allow: the worker is killed.
  bool on_message(const std::shared_ptr<Worker>& worker, std::string_view body) {
    std::optional<json::object> message = parse_message(body);
    if (!message) return false;
    const std::string_view type = *get_string(*message, "t");
    if (type == "ready") {
      if (worker->state != WorkerState::starting) return false;
      worker->state = WorkerState::ready;
      worker->start_timer.cancel();
      worker->memory_baseline = worker->memory.private_bytes(worker->pid);
      for (auto& [ticket, pending] : worker->running) arm_backstop(pending);
      watch_memory();
      // A standby whose predecessor is idle swaps in at once; a busy one
      // retires when its run ends (on_done).
      if (worker->standby_for != 0) {
        auto it = workers_.find(worker->standby_for);
        if (it != workers_.end() && it->second->state == WorkerState::ready &&
            it->second->running.empty()) {
          it->second->exit_reason = WorkerExit::retired;
          stop_worker(it->second);
        }
      }
      return true;
    }
    if (worker->state == WorkerState::starting) return false;
    const std::optional<std::uint64_t> id = get_count(*message, "id");
    if (!id) return false;
    if (type == "call") return on_call(worker, *id, *message);
    if (type == "done") return on_done(worker, *id, *message);
    return false;
  }

  bool on_call(const std::shared_ptr<Worker>& worker, Ticket ticket, const json::object& message) {
    const std::optional<std::uint64_t> call = get_count(message, "call");
    const json::string* name = get_string(message, "name");
    const json::string* args = get_string(message, "args");
    if (!call || !name || !args) return false;
    {
      std::lock_guard lock(stats_mutex_);
      ++stats_.tool_calls;
    }
    emit({.kind = Event::Kind::tool_call, .worker = worker->number, .pid = worker->pid});
    auto it = worker->running.find(ticket);
    if (it == worker->running.end() || it->second->settled) {
      answer(worker, ticket, *call, false, "Execution has already completed.");
      return true;
    }
    Pending& pending = *it->second;
    if (!pending.request.dispatcher) {
      answer(worker, ticket, *call, false, "no tool dispatcher: " + std::string(name->c_str()));
      return true;
    }
    auto state = std::make_shared<ToolAnswer::State>();
    state->pool = weak_from_this();
    state->worker = worker->number;
    state->ticket = ticket;
    state->call = *call;
    ToolAnswer answer(state);
    try {
      pending.request.dispatcher(std::string(name->data(), name->size()),
                                 std::string(args->data(), args->size()), answer);
    } catch (const std::exception& e) {
      answer.reject(e.what());
    } catch (...) {
      answer.reject("the tool dispatcher failed");
    }
    return true;
  }

  // Sends a tool call's answer. One the worker would refuse as an oversized
  // frame (and exit on, failing every run it holds) becomes a rejection
  // that says so: the guest sees a tool error it can catch.
  void answer(const std::shared_ptr<Worker>& worker, Ticket ticket, std::uint64_t call, bool ok,
              std::string payload) {
    auto message = [&](bool ok, std::string payload) {
      return json::object{{"t", "answer"},
                          {"id", ticket},
                          {"call", call},
                          {"ok", ok},
                          {"payload", std::move(payload)}};
    };
    std::string frame = encode_frame(message(ok, std::move(payload)));
    if (const std::size_t size = frame.size() - kFrameHeaderBytes; size > options_.max_frame) {
      frame = encode_frame(message(false, too_large("the tool's answer", size)));
    }
    write_frame(worker, std::move(frame));
  }

  void deliver_answer(const ToolAnswer::State& state, bool ok, std::string payload) {
    auto it = workers_.find(state.worker);
    if (it == workers_.end()) return;
    const std::shared_ptr<Worker>& worker = it->second;
    auto run = worker->running.find(state.ticket);
    if (run == worker->running.end() || run->second->settled) return;
    answer(worker, state.ticket, state.call, ok, std::move(payload));
  }

  bool on_done(const std::shared_ptr<Worker>& worker, Ticket ticket, const json::object& message) {
    auto it = worker->running.find(ticket);
    if (it == worker->running.end()) return false;
    std::optional<Outcome> answered;
    try {
      if (const json::value* execution = message.if_contains("execution");
          execution && execution->is_object()) {
        answered.emplace(core::execution_from_object(execution->get_object()));
      } else if (const json::value* failure = message.if_contains("failure");
                 failure && failure->is_object()) {
        answered.emplace(core::failure_from_object(failure->get_object()));
      } else {
        return false;
      }
    } catch (const std::exception&) {
      return false;
    }
    std::shared_ptr<Pending> pending = it->second;
    worker->running.erase(it);
    ++worker->executions;
    // Before the completion runs: a caller that reads the stats once it has
    // its answer must not still see its run as running.
    update_gauges();
    Outcome outcome = std::move(*answered);
    if (!pending->memory_verdict.empty()) outcome = memory_outcome(*pending, std::move(outcome));
    settle(pending, std::move(outcome));

    if (worker->memory_stopped && worker->state == WorkerState::ready) {
      worker->state = WorkerState::retiring;
      worker->exit_reason = WorkerExit::memory_bound;
    }
    if (worker->state == WorkerState::ready) {
      if (const json::value* ending = message.if_contains("ending");
          ending && ending->is_bool() && ending->get_bool()) {
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
      } else {
        spawn_successor(worker);
      }
      if (worker->state == WorkerState::retiring) promote_successor(worker);
    }
    if (worker->state == WorkerState::retiring && worker->running.empty()) {
      stop_worker(worker);
    }
    after_settle();
    return true;
  }

  void after_settle() {
    pump();
    if (shutting_down_ && !terminating_ && running_count() == 0) terminate_all();
  }

  std::size_t running_count() const {
    std::size_t n = 0;
    for (const auto& [number, worker] : workers_) n += worker->running.size();
    return n;
  }

  // Politely: close its socket (it exits on EOF), SIGTERM, then SIGKILL.
  void stop_worker(const std::shared_ptr<Worker>& worker) {
    if (worker->state == WorkerState::dying) return;
    worker->state = WorkerState::dying;
    promote_successor(worker);
    boost::system::error_code ignored;
    worker->socket.close(ignored);
    signal(worker, SIGTERM);
    worker->kill_timer.expires_after(
        std::chrono::duration_cast<Clock::duration>(options_.termination_delay));
    worker->kill_timer.async_wait([this, worker](boost::system::error_code ec) {
      if (!ec && !worker->reaped) signal(worker, SIGKILL);
    });
    fail_runs(worker);
  }

  // At once: a worker we no longer trust, or that is gone already.
  void kill_worker(const std::shared_ptr<Worker>& worker, WorkerExit reason, std::string why) {
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

  void signal(const std::shared_ptr<Worker>& worker, int sig) {
    if (worker->reaped || !worker->pidfd.is_open()) return;
    ::syscall(SYS_pidfd_send_signal, worker->pidfd.native_handle(), sig, nullptr, 0);
  }

  // Every run still on a dying worker fails: retryably, unless the worker
  // could not start at all (then retrying soon won't help).
  void fail_runs(const std::shared_ptr<Worker>& worker) {
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

  void reap(const std::shared_ptr<Worker>& worker) {
    int status = 0;
    if (::waitpid(worker->pid, &status, WNOHANG) <= 0) {
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

  void remove(const std::shared_ptr<Worker>& worker, const std::string& how) {
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

  // ---- shutdown ---------------------------------------------------------------

  void shutdown_on_loop(std::chrono::duration<double> drain, std::function<void()> done) {
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
    drain_timer_->expires_after(std::chrono::duration_cast<Clock::duration>(
        std::max(drain, std::chrono::duration<double>(0))));
    drain_timer_->async_wait([this](boost::system::error_code ec) {
      if (!ec && !terminating_) terminate_all();
    });
  }

  void terminate_all() {
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

  void finish_shutdown() {
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

  // ---- counters -----------------------------------------------------------------

  void update_gauges() {
    std::lock_guard lock(stats_mutex_);
    stats_.workers_live = workers_.size();
    stats_.queue_depth = queue_.size();
    stats_.executions_running = running_count();
  }

  void emit(const Event& event) {
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

  Options options_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::thread thread_;

  std::atomic<Ticket> next_ticket_{0};
  std::mutex live_mutex_;
  std::set<Ticket> live_;

  // Pool thread only.
  std::map<std::uint64_t, std::shared_ptr<Worker>> workers_;
  std::deque<std::shared_ptr<Pending>> queue_;
  std::uint64_t next_worker_ = 0;
  bool shutting_down_ = false;
  bool terminating_ = false;
  bool shutdown_finished_ = false;
  std::unique_ptr<asio::steady_timer> drain_timer_;
  asio::steady_timer memory_watch_{io_};
  bool memory_watching_ = false;
  std::vector<std::function<void()>> shutdown_waiters_;

  mutable std::mutex stats_mutex_;
  Stats stats_;
  std::mutex listeners_mutex_;
  std::map<std::uint64_t, Listener> listeners_;
  std::uint64_t next_listener_ = 0;
};

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

void WorkerPool::shutdown(std::chrono::duration<double> drain, std::function<void()> done) {
  impl_->shutdown(drain, std::move(done));
}

void WorkerPool::shutdown(std::chrono::duration<double> drain) {
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
