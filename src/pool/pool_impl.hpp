// src/pool/pool_impl.hpp: WorkerPool::Impl, shared by the files that
// implement it by role (see src/pool/README.md).
//
// Everything that touches workers, the queue and executions runs on the
// pool's own io_context thread; public calls post onto it. Each worker has
// its IPC socket (frames), its pidfd (exit), and per-run backstop timers.
#pragma once

#include <array>
#include <atomic>
#include <boost/asio.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "corral/pool.hpp"
#include "pool/frames.hpp"
#include "pool/resident_memory.hpp"
#include "pool/stderr_lines.hpp"

namespace corral::pool {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

inline Failure make_failure(FailureCode code, std::string message) {
  return Failure{code, std::move(message), nullptr};
}

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
  explicit Impl(Options options);
  ~Impl() { stop(); }

  // Ends the pool's thread. Handlers capture `this`: the thread is joined
  // before the Impl goes, whoever drops the last reference.
  void stop();

  const Options& options() const noexcept { return options_; }
  bool on_pool_thread() const { return std::this_thread::get_id() == thread_.get_id(); }

  Ticket submit(Request request, Completion done);
  bool cancel(Ticket ticket);
  void shutdown(std::chrono::milliseconds drain, std::function<void()> done);
  Stats stats() const;
  std::uint64_t subscribe(Listener listener);
  void unsubscribe(std::uint64_t id);
  // From any thread, through ToolAnswer.
  bool answer(const std::shared_ptr<ToolAnswer::State>& state, bool ok, std::string payload);

 private:
  struct Worker;

  struct Pending {
    Ticket ticket = 0;
    Request request;
    Completion done;
    std::shared_ptr<Worker> worker;
    Clock::time_point submitted = Clock::now();  // when submit() took it
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
    // The least private resident memory read after any of its runs: its
    // growth (Options::retire_on_growth) is measured from here.
    std::uint64_t least_after_run = 0;
    bool memory_stopped = false;
    int death_signal = 0;  // once reaped
    std::optional<WorkerExit> exit_reason;
    std::string exit_detail;  // why, for the runs that fail with it
    bool reaped = false;
  };

  // Admission and scheduling (admission.cc).
  void admit(const std::shared_ptr<Pending>& pending);
  void reject(const std::shared_ptr<Pending>& pending, Rejection rejection);
  std::size_t live_workers() const;
  std::shared_ptr<Worker> free_worker();
  void pump();
  std::string too_large(std::string_view what, std::size_t size) const;
  static json::object run_message(const Pending& pending);
  void start(const std::shared_ptr<Pending>& pending, const std::shared_ptr<Worker>& worker);
  void cancel_on_loop(Ticket ticket);

  // A run's deadlines and its worker's memory, watched from outside (run_watch.cc).
  void watch_memory();
  void check_memory();
  void stop_for_memory(const std::shared_ptr<Worker>& worker, std::uint64_t held,
                       std::uint64_t allowed);
  static Outcome memory_outcome(const Pending& pending, Outcome answered);
  void arm_backstop(const std::shared_ptr<Pending>& pending);

  // A worker's socket and stderr: frames in and out, tool calls, answers (worker_channel.cc).
  void read_stderr(const std::shared_ptr<Worker>& worker);
  void log_stderr(const Worker& worker, std::string line);
  void read_next(const std::shared_ptr<Worker>& worker);
  void await_exit(const std::shared_ptr<Worker>& worker);
  void write(const std::shared_ptr<Worker>& worker, const json::object& message);
  void write_frame(const std::shared_ptr<Worker>& worker, std::string frame);
  void write_next(const std::shared_ptr<Worker>& worker);
  bool on_message(const std::shared_ptr<Worker>& worker, std::string_view body);
  bool on_call(const std::shared_ptr<Worker>& worker, Ticket ticket, const json::object& message);
  void answer(const std::shared_ptr<Worker>& worker, Ticket ticket, std::uint64_t call, bool ok,
              std::string payload);
  void deliver_answer(const ToolAnswer::State& state, bool ok, std::string payload);
  // `value`: the tail of the done's frame, an execution's value text.
  bool on_done(const std::shared_ptr<Worker>& worker, Ticket ticket, const json::object& message,
               std::optional<std::string_view> value);

  // Workers from spawn to reap, retirement and successors, drain and shutdown
  // (worker_lifecycle.cc).
  std::shared_ptr<Worker> spawn(bool speculative = false);
  void spawn_failed(const std::shared_ptr<Worker>& worker, std::string why);
  void spawn_successor(const std::shared_ptr<Worker>& worker);
  bool successor_ready(const Worker& worker) const;
  void promote_successor(const std::shared_ptr<Worker>& worker);
  void retire_if_due(const std::shared_ptr<Worker>& worker, bool ending);
  bool grown_too_much(Worker& worker);
  void after_settle();
  std::size_t running_count() const;
  void stop_worker(const std::shared_ptr<Worker>& worker);
  void kill_worker(const std::shared_ptr<Worker>& worker, WorkerExit reason, std::string why);
  void signal(const std::shared_ptr<Worker>& worker, int sig);
  void fail_runs(const std::shared_ptr<Worker>& worker);
  void await_reap(const std::shared_ptr<Worker>& worker);
  void reap(const std::shared_ptr<Worker>& worker);
  void remove(const std::shared_ptr<Worker>& worker, const std::string& how);
  void shutdown_on_loop(std::chrono::milliseconds drain, std::function<void()> done);
  void terminate_all();
  void finish_shutdown();

  // Settling runs, stats and events (outcomes.cc).
  void settle(const std::shared_ptr<Pending>& pending, Outcome outcome);
  void finish(const std::shared_ptr<Pending>& pending, Outcome outcome);
  void update_gauges();
  void emit(const Event& event);

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

}  // namespace corral::pool
