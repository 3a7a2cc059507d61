// src/process/supervisor.cc: admission (slots, busy, shutdown), one run from
// spawn to Execution, and the re-check of units left by cleanup_failed.
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "corral/process.hpp"
#include "process/capture.hpp"
#include "process/cgroup.hpp"
#include "process/confine.hpp"
#include "process/faults.hpp"
#include "process/limits.hpp"
#include "process/run_loop.hpp"
#include "process/spawn.hpp"
#include "process/unit.hpp"

namespace corral::process {

std::string_view to_string(UnitKind kind) noexcept {
  switch (kind) {
    case UnitKind::cgroup:
      return "cgroup";
    case UnitKind::pid_namespace:
      return "pid_namespace";
    case UnitKind::process_group:
      return "process_group";
  }
  return "process_group";
}

std::optional<UnitKind> unit_kind_from_string(std::string_view text) noexcept {
  for (auto kind : {UnitKind::cgroup, UnitKind::pid_namespace, UnitKind::process_group}) {
    if (to_string(kind) == text) return kind;
  }
  return std::nullopt;
}

std::string_view to_string(SlotState state) noexcept {
  switch (state) {
    case SlotState::idle:
      return "idle";
    case SlotState::running:
      return "running";
    case SlotState::cleaning_up:
      return "cleaning_up";
    case SlotState::cleanup_failed:
      return "cleanup_failed";
  }
  return "idle";
}

std::vector<UnitKind> available_units() {
  std::vector<UnitKind> units;
  if (CgroupParent::create("")) units.push_back(UnitKind::cgroup);
  if (pid_namespace_available()) units.push_back(UnitKind::pid_namespace);
  units.push_back(UnitKind::process_group);
  return units;
}

namespace {

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

void check_options(const SupervisorOptions& options) {
  if (options.slots < 1) throw std::invalid_argument("slots must be at least 1");
  if (options.deadline <= std::chrono::nanoseconds::zero()) {
    throw std::invalid_argument("deadline must be positive");
  }
  if (options.cleanup_budget <= std::chrono::nanoseconds::zero()) {
    throw std::invalid_argument("cleanup_budget must be positive");
  }
  if (options.output_budget == 0) throw std::invalid_argument("output_budget must be positive");
  if (options.recheck_interval <= std::chrono::nanoseconds::zero()) {
    throw std::invalid_argument("recheck_interval must be positive");
  }
}

void check_command(const Command& command) {
  if (command.argv.empty() || command.argv[0].empty()) {
    throw_failure(FailureCode::invalid_request, "the command has no program");
  }
  for (const auto& arg : command.argv) {
    if (arg.find('\0') != std::string::npos) {
      throw_failure(FailureCode::invalid_request, "an argument contains a NUL byte");
    }
  }
  const auto& hardening = command.hardening;
  for (const auto& [name, value] : hardening.environment_set) {
    if (name.empty() || name.find('=') != std::string::npos ||
        (name + value).find('\0') != std::string::npos) {
      throw_failure(FailureCode::invalid_request, "bad environment variable: " + name);
    }
  }
}

}  // namespace

class Supervisor::Impl {
 public:
  explicit Impl(SupervisorOptions options) : options_(std::move(options)) {
    check_options(options_);
    // A supervisor that died (SIGKILL, crash) left its cgroup directories
    // and whatever ran in them: kill and remove them before we add ours.
    sweep_stale_cgroups(true);
    choose_unit();
    if (cgroup_parent_) {
      leaf_pool_.emplace(cgroup_parent_->path(), static_cast<std::size_t>(options_.slots));
    }
    limits_.emplace(options_.slots,
                    cgroup_parent_ ? cgroup_parent_->controllers() : V2Controllers{});
    shutdown_fd_ = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!shutdown_fd_) throw_failure(FailureCode::unavailable, errno_message("eventfd", errno));
    slots_.resize(static_cast<size_t>(options_.slots));
  }

  ~Impl() {
    shutdown(Clock::now() + options_.cleanup_budget);
    {
      std::lock_guard lock(mutex_);
      stop_rechecker_ = true;
    }
    changed_.notify_all();
    if (rechecker_.joinable()) rechecker_.join();
    // Units still not empty are abandoned here (a last SIGKILL first).
    for (auto& stuck : stuck_) {
      if (!suppressed()) {
        stuck.unit->kill_all();
        if (stuck.limits) stuck.limits->kill_all();
      }
      if (stuck.unit->empty()) stuck.unit->release();
      if (stuck.limits && stuck.limits->empty()) limits_->release(stuck.limits);
    }
    stuck_.clear();
  }

  Execution run(const Command& command, const RunOptions& run_options) {
    check_command(command);
    auto started = Clock::now();
    try {
      size_t slot = admit(command);
      return run_in_slot(slot, command, run_options, started);
    } catch (const Error& e) {
      std::lock_guard lock(mutex_);
      ++runs_failed_;
      ++failures_[e.code()];
      throw;
    } catch (...) {
      std::lock_guard lock(mutex_);
      ++runs_failed_;
      throw;
    }
  }

  Status status() const {
    std::lock_guard lock(mutex_);
    Status status;
    status.unit = unit_kind_;
    status.slots = options_.slots;
    status.accepting = accepting_;
    status.slot_status = slots_;
    for (const auto& slot : slots_) {
      if (slot.state == SlotState::running || slot.state == SlotState::cleaning_up)
        ++status.running;
      if (slot.state == SlotState::cleanup_failed) ++status.cleanup_failed;
    }
    status.runs_started = runs_started_;
    status.runs_failed = runs_failed_;
    status.failures = failures_;
    return status;
  }

  std::vector<Protection> limit_protections(const ResourceLimits& limits) const {
    return limits_->protections(limits);
  }
  std::size_t free_leaves() const {
    return (leaf_pool_ ? leaf_pool_->free_leaves() : 0) + limits_->free_leaves();
  }

  bool shutdown(Clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    if (accepting_) {
      accepting_ = false;
      std::uint64_t one = 1;
      [[maybe_unused]] ssize_t n = ::write(shutdown_fd_.get(), &one, sizeof one);
    }
    return changed_.wait_until(lock, deadline, [&] { return all_idle(); });
  }

 private:
  struct Stuck {
    size_t slot;
    std::unique_ptr<Unit> unit;
    std::unique_ptr<LimitLeaf> limits;  // v1 limit leaves, if any
  };

  void choose_unit() {
    auto try_cgroup = [&] {
      auto parent = CgroupParent::create(options_.cgroup_parent);
      if (parent) cgroup_parent_.emplace(std::move(*parent));
      return cgroup_parent_.has_value();
    };
    if (options_.unit) {
      bool ok = true;
      if (*options_.unit == UnitKind::cgroup) ok = try_cgroup();
      if (*options_.unit == UnitKind::pid_namespace) ok = pid_namespace_available();
      if (!ok) {
        throw_failure(FailureCode::unavailable, "containment unit not available here: " +
                                                    std::string(to_string(*options_.unit)));
      }
      unit_kind_ = *options_.unit;
    } else if (try_cgroup()) {
      unit_kind_ = UnitKind::cgroup;
    } else if (pid_namespace_available()) {
      unit_kind_ = UnitKind::pid_namespace;
    } else {
      unit_kind_ = UnitKind::process_group;
    }
    if (unit_kind_ == UnitKind::process_group) {
      // Process-wide and never undone: orphans of every run re-parent here.
      ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
  }

  bool suppressed() const {
    return options_.faults && options_.faults->suppress_kill && options_.faults->suppress_kill();
  }

  bool all_idle() const {
    return std::all_of(slots_.begin(), slots_.end(),
                       [](const SlotStatus& s) { return s.state == SlotState::idle; });
  }

  size_t admit(const Command& command) {
    std::lock_guard lock(mutex_);
    if (!accepting_) {
      throw_failure(FailureCode::unavailable, "the supervisor is shut down");
    }
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].state != SlotState::idle) continue;
      slots_[i] = SlotStatus{SlotState::running, 0, command.argv[0], Clock::now(), {}};
      ++runs_started_;
      return i;
    }
    throw_failure(FailureCode::busy,
                  "all " + std::to_string(slots_.size()) + " execution slots are taken");
  }

  void set_slot(size_t slot, SlotState state, const Unit* unit) {
    {
      std::lock_guard lock(mutex_);
      slots_[slot].state = state;
      slots_[slot].since = Clock::now();
      if (unit != nullptr) {
        slots_[slot].pid = unit->leader();
        slots_[slot].unit = unit->describe();
      }
      if (state == SlotState::idle) slots_[slot] = SlotStatus{};
    }
    changed_.notify_all();
  }

  // A started run: what the run loop watches and what its verdict reads.
  struct Launch {
    std::unique_ptr<Unit> unit;
    std::unique_ptr<LimitLeaf> limit_leaf;  // v1 limit leaves, if any
    std::uint64_t oom_before = 0;           // the unit's OOM kills before the run
    RunLoopInput input;                     // with the read ends of the output pipes
  };

  Execution run_in_slot(size_t slot, const Command& command, const RunOptions& run_options,
                        Clock::time_point started) {
    auto deadline = started + options_.deadline;
    if (run_options.deadline) deadline = std::min(deadline, *run_options.deadline);
    refuse_if_cancelled_or_late(slot, run_options, deadline);

    const ResourceLimits& limits = command.hardening.confinement.limits;
    std::optional<Command> with_rlimit;
    const Command& to_spawn = command_within_limits(slot, command, with_rlimit);
    Launch run = launch(slot, command, to_spawn);
    set_slot(slot, SlotState::running, run.unit.get());
    OutputCapture capture(options_.output_budget);
    RunLoopResult result = watch(slot, deadline, run_options, run, capture);

    ExecutionData data = collect(capture, *run.unit, started, result.ending);
    std::string description = run.unit->describe();
    bool oom_killed =
        run.unit->oom_kills() > run.oom_before || (run.limit_leaf && run.limit_leaf->oom_killed());
    if (result.unit_empty && run.limit_leaf && !run.limit_leaf->empty()) {
      // Only possible when the unit does not hold every descendant (a
      // process group): the limit leaf still lists one. Kill and wait.
      result.unit_empty = kill_until_empty(*run.limit_leaf);
    }
    if (result.unit_empty) {
      run.unit->release();
      limits_->release(run.limit_leaf);
      set_slot(slot, SlotState::idle, nullptr);
    } else {
      park(slot, std::move(run.unit), std::move(run.limit_leaf));
    }

    std::string program = command.argv[0];
    bool ok = result.unit_empty && result.ending == Ending::exited && data.exit_code == 0;
    data.failed = !ok;
    auto execution = std::make_shared<const Execution>(std::move(data));
    throw_if_failed(program, description, result, oom_killed, limits, execution);
    return *execution;
  }

  // Frees the slot and throws, the run not started: cancelled already, or
  // its deadline passed.
  void refuse_if_cancelled_or_late(size_t slot, const RunOptions& run_options,
                                   Clock::time_point deadline) {
    auto fail_before_start = [&](FailureCode code, const std::string& message) {
      set_slot(slot, SlotState::idle, nullptr);
      ExecutionData data;
      data.failed = true;
      throw_failure(code, message, std::make_shared<const Execution>(std::move(data)));
    };
    if (run_options.cancel && run_options.cancel->cancelled()) {
      fail_before_start(FailureCode::cancelled, "cancelled before the command started");
    }
    if (Clock::now() >= deadline) {
      fail_before_start(FailureCode::timeout, "the deadline passed before the command started");
    }
  }

  // The command to spawn: `command` itself, or a copy in `with_rlimit`
  // bounded by an address-space rlimit where no cgroup enforces its memory
  // limit. Frees the slot and throws where a strict confinement has a limit
  // this host cannot enforce.
  const Command& command_within_limits(size_t slot, const Command& command,
                                       std::optional<Command>& with_rlimit) {
    const ResourceLimits& limits = command.hardening.confinement.limits;
    if (!any_limit(limits)) return command;
    auto missing = limits_->unenforced(limits);
    if (!missing.empty() && command.hardening.confinement.strict) {
      set_slot(slot, SlotState::idle, nullptr);
      std::string names;
      for (const auto& name : missing) names += (names.empty() ? "" : "; ") + name;
      throw_failure(FailureCode::unavailable,
                    "strict confinement: a resource limit cannot be enforced here: " + names);
    }
    if (limits.memory_bytes && !command.hardening.rlimits.address_space &&
        !limits_->enforces(LimitController::memory)) {
      // The weaker fallback: each process alone is bounded.
      with_rlimit = command;
      with_rlimit->hardening.rlimits.address_space = limits.memory_bytes;
      return *with_rlimit;
    }
    return command;
  }

  // Spawns `to_spawn` in a fresh unit with its limits applied and its output
  // piped. On failure, frees what it took and the slot, and throws.
  Launch launch(size_t slot, const Command& command, const Command& to_spawn) {
    const ResourceLimits& limits = command.hardening.confinement.limits;
    Launch run;
    try {
      std::string executable = resolve_executable(command);
      run.unit = make_unit(unit_kind_, leaf_pool_ ? &*leaf_pool_ : nullptr);
      if (auto leaf = run.unit->cgroup_path(); !leaf.empty()) {
        limits_->apply_v2(leaf, limits);
        run.oom_before = run.unit->oom_kills();
      }
      run.limit_leaf = limits_->acquire(limits);
      UniqueFd stdout_write, stderr_write;
      make_pipe(run.input.stdout_read, stdout_write);
      make_pipe(run.input.stderr_read, stderr_write);
      SpawnRequest request;
      run.unit->prepare(request);
      if (run.limit_leaf) request.limit_cgroup_procs_fds = run.limit_leaf->procs_fds();
      request.stdout_fd = stdout_write.get();
      request.stderr_fd = stderr_write.get();
      run.unit->started(spawn(to_spawn, executable, request));
      // The child joined its limit leaves itself before exec (or the start
      // failed). Moving it again from here would cost a cgroup migration
      // (an RCU grace period, milliseconds) for nothing.
      if (run.limit_leaf) run.limit_leaf->close_procs();
    } catch (const std::exception& e) {
      if (run.unit) run.unit->release();
      if (run.limit_leaf) limits_->release(run.limit_leaf);
      set_slot(slot, SlotState::idle, nullptr);
      throw_failure(FailureCode::unavailable, std::string("could not start: ") + e.what());
    }
    return run;
  }

  // Drives the run loop until the run ended and its unit was cleaned up (or
  // could not be within the budget); `capture` holds its output.
  RunLoopResult watch(size_t slot, Clock::time_point deadline, const RunOptions& run_options,
                      Launch& run, OutputCapture& capture) {
    RunLoopInput& input = run.input;
    ::fcntl(input.stdout_read.get(), F_SETFL, O_NONBLOCK);
    ::fcntl(input.stderr_read.get(), F_SETFL, O_NONBLOCK);
    input.unit = run.unit.get();
    input.deadline = deadline;
    input.cleanup_budget = options_.cleanup_budget;
    input.cancel_fd = run_options.cancel ? run_options.cancel->wait_handle() : -1;
    input.shutdown_fd = shutdown_fd_.get();
    if (options_.faults) input.suppress_kill = options_.faults->suppress_kill;
    input.on_cleanup = [this, slot] { set_slot(slot, SlotState::cleaning_up, nullptr); };
    RunLoopResult result = drive_run(input, capture);
    capture.finish();
    return result;
  }

  // The run's output and usage, and its exit code once the leader exited
  // and was reaped. `failed` is left to the verdict.
  static ExecutionData collect(OutputCapture& capture, Unit& unit, Clock::time_point started,
                               Ending ending) {
    ExecutionData data;
    data.stdout_text = std::move(capture.stdout_text);
    data.stderr_text = std::move(capture.stderr_text);
    data.stdout_truncated = capture.stdout_truncated;
    data.stderr_truncated = capture.stderr_truncated;
    data.stdout_replaced = capture.stdout_replaced;
    data.stderr_replaced = capture.stderr_replaced;
    data.usage.output_bytes = capture.total_bytes;
    data.usage.wall_time = seconds_between(started, Clock::now());
    data.usage.cpu_time = unit.cpu_seconds();
    data.usage.memory_peak = static_cast<std::uint64_t>(unit.leader_usage().ru_maxrss) * 1024;
    int status = unit.leader_status();
    if (ending == Ending::exited && unit.leader_reaped()) {
      data.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    return data;
  }

  // Kills what `leaf` still lists until it is empty or the cleanup budget is
  // spent. Returns whether it is empty.
  bool kill_until_empty(LimitLeaf& leaf) {
    auto until = Clock::now() + options_.cleanup_budget;
    while (!leaf.empty() && Clock::now() < until) {
      if (!suppressed()) leaf.kill_all();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return leaf.empty();
  }

  // Throws the failure a finished run is, most telling first: a unit not
  // seen empty, the deadline, a cancellation, the memory limit, a non-zero
  // exit. Returns for a run that succeeded.
  static void throw_if_failed(const std::string& program, const std::string& description,
                              const RunLoopResult& result, bool oom_killed,
                              const ResourceLimits& limits,
                              const std::shared_ptr<const Execution>& execution) {
    if (!result.unit_empty) {
      throw_failure(FailureCode::cleanup_failed,
                    program + ": " + description + " still holds a live process after the " +
                        "cleanup budget; its slot stays taken until it is seen empty",
                    execution);
    }
    switch (result.ending) {
      case Ending::timeout:
        throw_failure(FailureCode::timeout, program + ": deadline exceeded", execution);
      case Ending::cancelled:
        throw_failure(FailureCode::cancelled, program + ": cancelled", execution);
      case Ending::exited:
        break;
    }
    if (execution->failed() && oom_killed) {
      throw_failure(FailureCode::memory_limit,
                    program + ": the run reached its memory limit (" +
                        std::to_string(limits.memory_bytes.value_or(0)) +
                        " bytes) and the kernel killed a process",
                    execution);
    }
    if (execution->failed()) {
      throw_failure(FailureCode::command_failed,
                    program + ": exited with status " + std::to_string(*execution->exit_code()),
                    execution);
    }
  }

  // Keeps the slot taken by a unit not seen empty; the re-check frees it.
  void park(size_t slot, std::unique_ptr<Unit> unit, std::unique_ptr<LimitLeaf> limits) {
    {
      std::lock_guard lock(mutex_);
      slots_[slot].state = SlotState::cleanup_failed;
      slots_[slot].since = Clock::now();
      stuck_.push_back(Stuck{slot, std::move(unit), std::move(limits)});
      if (!rechecker_.joinable()) rechecker_ = std::thread([this] { recheck_loop(); });
    }
    changed_.notify_all();
  }

  void recheck_loop() {
    std::unique_lock lock(mutex_);
    while (!stop_rechecker_) {
      changed_.wait_for(lock, options_.recheck_interval);
      if (stop_rechecker_) break;
      for (auto it = stuck_.begin(); it != stuck_.end();) {
        Unit& unit = *it->unit;
        bool unit_empty = unit.empty();
        if (!unit_empty || (it->limits && !it->limits->empty())) {
          if (!suppressed()) {
            if (!unit_empty) unit.kill_all();
            if (it->limits) it->limits->kill_all();
          }
          ++it;
          continue;
        }
        unit.release();
        limits_->release(it->limits);
        slots_[it->slot] = SlotStatus{};
        it = stuck_.erase(it);
        changed_.notify_all();
      }
    }
  }

  SupervisorOptions options_;
  UnitKind unit_kind_ = UnitKind::process_group;
  std::optional<CgroupParent> cgroup_parent_;
  std::optional<CgroupLeafPool> leaf_pool_;  // destroyed before the parent
  std::optional<LimitCgroups> limits_;
  UniqueFd shutdown_fd_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<SlotStatus> slots_;
  bool accepting_ = true;
  std::uint64_t runs_started_ = 0;
  std::uint64_t runs_failed_ = 0;
  std::map<FailureCode, std::uint64_t> failures_;
  std::vector<Stuck> stuck_;
  std::thread rechecker_;
  bool stop_rechecker_ = false;
};

Supervisor::Supervisor(SupervisorOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
Supervisor::~Supervisor() = default;

Execution Supervisor::run(const Command& command, const RunOptions& options) {
  return impl_->run(command, options);
}

Status Supervisor::status() const { return impl_->status(); }

std::vector<Protection> Supervisor::protections(const Hardening& hardening) const {
  auto out = confinement_protections(hardening);
  auto limits = impl_->limit_protections(hardening.confinement.limits);
  out.insert(out.end(), limits.begin(), limits.end());
  return out;
}

bool Supervisor::shutdown(Clock::time_point deadline) { return impl_->shutdown(deadline); }

}  // namespace corral::process
