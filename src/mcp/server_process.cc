// src/mcp/server_process.cc: start, contain and stop a stdio upstream server.
#include "mcp/server_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "process/confine.hpp"
#include "process/fd.hpp"
#include "process/spawn.hpp"

namespace corral::mcp {

namespace {

using Clock = std::chrono::steady_clock;

// A copy of `fd` numbered 3 or more: the child dup3()s its stdio onto 0, 1
// and 2, which fails (EINVAL) for a descriptor already numbered so (a
// process started with one of them closed gets pipes there).
process::UniqueFd lifted(int fd) {
  process::UniqueFd out(::fcntl(fd, F_DUPFD_CLOEXEC, 3));
  if (!out) throw process::SpawnError(std::string("fcntl: ") + std::strerror(errno));
  return out;
}

// corral's stderr for the server, or /dev/null when corral has none.
process::UniqueFd server_stderr() {
  if (::fcntl(STDERR_FILENO, F_GETFD) >= 0) return lifted(STDERR_FILENO);
  process::UniqueFd null(::open("/dev/null", O_WRONLY | O_CLOEXEC));
  if (!null) throw process::SpawnError(std::string("open /dev/null: ") + std::strerror(errno));
  return lifted(null.get());
}

std::string describe_status(int status) {
  return WIFEXITED(status)     ? "exit " + std::to_string(WEXITSTATUS(status))
         : WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                               : "status " + std::to_string(status);
}

}  // namespace

process::Hardening upstream_hardening(const Upstream& upstream) {
  process::Hardening h;
  h.environment_allow = upstream.env_allow;
  h.environment_set = upstream.env_set;
  h.confinement = upstream.confinement;
  return h;
}

ServerContainment::ServerContainment(const process::Hardening& hardening) : hardening_(hardening) {
  // What a crashed predecessor left in its cgroup directories goes first, as
  // a Supervisor's start does (once per process).
  process::sweep_stale_cgroups();
  if (auto parent = process::CgroupParent::create({})) parent_.emplace(std::move(*parent));
  if (parent_) {
    unit_ = process::UnitKind::cgroup;
    leaves_.emplace(parent_->path(), 1);
  } else if (process::pid_namespace_available()) {
    unit_ = process::UnitKind::pid_namespace;
  }
  limits_.emplace(1, parent_ ? parent_->controllers() : process::V2Controllers{});
  const bool holds_setsid = unit_ != process::UnitKind::process_group;
  protections_.push_back(
      {"unit", holds_setsid,
       std::string(process::to_string(unit_)) +
           (holds_setsid ? ": holds every descendant; closing the upstream kills the tree"
                         : ": a descendant that calls setsid() leaves it")});
  for (auto& p : process::confinement_protections(hardening_)) protections_.push_back(std::move(p));
  for (auto& p : limits_->protections(hardening_.confinement.limits))
    protections_.push_back(std::move(p));
}

ServerProcess::ServerProcess(std::shared_ptr<ServerContainment> containment,
                             const std::vector<std::string>& argv, int stdin_fd, int stdout_fd)
    : containment_(std::move(containment)) {
  ServerContainment& c = *containment_;
  process::Command command{argv, c.hardening_};
  const process::ResourceLimits& limits = command.hardening.confinement.limits;
  if (process::any_limit(limits)) {
    const auto missing = c.limits_->unenforced(limits);
    if (!missing.empty() && command.hardening.confinement.strict) {
      std::string names;
      for (const auto& name : missing) names += (names.empty() ? "" : "; ") + name;
      throw process::SpawnError("strict confinement: a resource limit cannot be enforced here: " +
                                names);
    }
    // The weaker fallback a Supervisor takes too: each process alone bounded.
    if (limits.memory_bytes && !command.hardening.rlimits.address_space &&
        !c.limits_->enforces(process::LimitController::memory))
      command.hardening.rlimits.address_space = limits.memory_bytes;
  }
  const std::string executable = process::resolve_executable(command);
  process::UniqueFd in = lifted(stdin_fd), out = lifted(stdout_fd), err = server_stderr();
  try {
    unit_ = process::make_unit(c.unit_, c.leaves_ ? &*c.leaves_ : nullptr);
    if (auto leaf = unit_->cgroup_path(); !leaf.empty()) c.limits_->apply_v2(leaf, limits);
    limit_leaf_ = c.limits_->acquire(limits);
    process::SpawnRequest request;
    unit_->prepare(request);
    if (limit_leaf_) request.limit_cgroup_procs_fds = limit_leaf_->procs_fds();
    request.stdin_fd = in.get();
    request.stdout_fd = out.get();
    request.stderr_fd = err.get();
    unit_->started(process::spawn(command, executable, request));
    if (limit_leaf_) limit_leaf_->close_procs();  // the child joined them before exec
  } catch (const process::SpawnError&) {
    if (unit_) unit_->release();
    if (limit_leaf_) c.limits_->release(limit_leaf_);
    throw;
  } catch (const std::exception& e) {
    if (unit_) unit_->release();
    if (limit_leaf_) c.limits_->release(limit_leaf_);
    throw process::SpawnError(e.what());
  }
  pid_ = unit_->leader();
}

ServerProcess::~ServerProcess() { stop(std::chrono::milliseconds(0)); }

bool ServerProcess::wait_empty(Clock::time_point deadline) {
  while (!unit_->empty()) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    // Woken by the leader's exit or the leaf's cgroup.events; the cap covers
    // descendants outliving the leader in a unit without an event
    // descriptor (a process group).
    pollfd fds[2] = {{unit_->leader_fd(), POLLIN, 0}, {unit_->event_fd(), POLLPRI, 0}};
    ::poll(fds, 2, static_cast<int>(std::min<long long>(left.count(), 20)));
  }
  return true;
}

std::string ServerProcess::stop(std::chrono::milliseconds grace) {
  if (stopped_ || !unit_) return exit_;
  stopped_ = true;
  if (grace.count() > 0) {
    unit_->terminate();
    if (wait_empty(Clock::now() + grace)) grace = std::chrono::milliseconds(0);
  }
  if (!unit_->empty()) {
    unit_->kill_all();
    if (limit_leaf_) limit_leaf_->kill_all();
    // SIGKILL cannot be ignored: this bound is only for a process stuck in
    // the kernel (uninterruptible I/O), which is then left behind.
    wait_empty(Clock::now() + std::chrono::seconds(5));
  }
  if (unit_->leader_reaped()) exit_ = describe_status(unit_->leader_status());
  if (unit_->empty()) {
    unit_->release();
    if (limit_leaf_) containment_->limits_->release(limit_leaf_);
  }
  return exit_;
}

}  // namespace corral::mcp
