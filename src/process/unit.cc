// src/process/unit.cc: the three containment units.
#include "process/unit.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace corral::process {

void Unit::started(Spawned spawned) {
  leader_ = spawned.pid;
  pidfd_ = std::move(spawned.pidfd);
  network_ = std::move(spawned.network);
}

bool Unit::reap_leader() {
  if (leader_reaped_) return true;
  if (leader_ <= 0) return false;
  int status = 0;
  struct rusage usage {};
  pid_t got;
  do {
    got = ::wait4(leader_, &status, WNOHANG, &usage);
  } while (got < 0 && errno == EINTR);
  if (got == leader_) {
    leader_reaped_with(status, usage);
  } else if (got < 0 && errno == ECHILD) {
    leader_reaped_ = true;  // someone else reaped it; the status is lost
  }
  return leader_reaped_;
}

void Unit::leader_reaped_with(int status, const struct rusage& usage) {
  leader_reaped_ = true;
  leader_status_ = status;
  leader_usage_ = usage;
  pidfd_.reset();
}

double Unit::cpu_seconds() const {
  auto seconds = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
  };
  return seconds(leader_usage_.ru_utime) + seconds(leader_usage_.ru_stime);
}

namespace {

// CgroupUnit: a leaf per run; the child joins it before exec.
class CgroupUnit final : public Unit {
 public:
  // A reused leaf's cpu.stat counts earlier runs too: keep where it started.
  CgroupUnit(CgroupLeaf leaf, CgroupLeafPool* pool)
      : leaf_(std::move(leaf)), pool_(pool), cpu_base_(leaf_.cpu_seconds().value_or(0)) {}
  UnitKind kind() const override { return UnitKind::cgroup; }
  void prepare(SpawnRequest& request) override {
    Unit::prepare(request);
    request.cgroup_procs_fd = leaf_.procs_fd();
    directory_ = UniqueFd(::open(leaf_.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    request.cgroup_dir_fd = directory_.get();  // -1 if it failed: then joined by cgroup.procs
  }
  void started(Spawned spawned) override {
    Unit::started(std::move(spawned));
    leaf_.close_procs();
    directory_.reset();
  }
  void terminate() override {
    if (!seen_empty_) leaf_.signal_all(SIGTERM);
  }
  void kill_all() override {
    if (!seen_empty_) leaf_.kill_all();
  }
  bool empty() override {
    if (!seen_empty_) seen_empty_ = leaf_.empty();
    // A leaf with no live process has no running leader: reap it.
    return seen_empty_ && reap_leader();
  }
  int event_fd() const override { return leaf_.events_fd(); }
  double cpu_seconds() const override {
    auto seconds = leaf_.cpu_seconds();
    return seconds ? *seconds - cpu_base_ : Unit::cpu_seconds();
  }
  std::string describe() const override { return "cgroup " + leaf_.path(); }
  void release_resources() override {
    if (released_) return;
    released_ = true;
    if (seen_empty_ && pool_ != nullptr) {
      pool_->give(std::move(leaf_));
    } else {
      leaf_.remove();
    }
  }
  std::string cgroup_path() const override { return leaf_.path(); }
  std::uint64_t oom_kills() const override { return leaf_.oom_kills(); }

 private:
  CgroupLeaf leaf_;
  UniqueFd directory_;  // the leaf, open for CLONE_INTO_CGROUP during a start
  CgroupLeafPool* pool_;
  double cpu_base_ = 0;
  bool seen_empty_ = false;
  bool released_ = false;
};

// PidNamespaceUnit: our init is pid 1 of a new namespace; its exit takes the
// namespace with it, and the kernel only lets it be reaped once every other
// process in the namespace is gone.
class PidNamespaceUnit final : public Unit {
 public:
  UnitKind kind() const override { return UnitKind::pid_namespace; }
  void terminate() override { send(SIGTERM); }
  void kill_all() override { send(SIGKILL); }
  bool empty() override { return reap_leader(); }
  std::string describe() const override {
    return "pid namespace (init " + std::to_string(leader_) + ")";
  }

 private:
  void send(int signal) {
    if (!leader_reaped_ && pidfd_)
      ::syscall(SYS_pidfd_send_signal, pidfd_.get(), signal, nullptr, 0);
  }
};

// ProcessGroupUnit: the leader's new process group. Orphans re-parent to the
// supervisor (a child subreaper) so they can be reaped here.
class ProcessGroupUnit final : public Unit {
 public:
  UnitKind kind() const override { return UnitKind::process_group; }
  void terminate() override { send(SIGTERM); }
  void kill_all() override { send(SIGKILL); }
  bool empty() override {
    if (seen_empty_) return true;
    reap_leader();
    for (;;) {
      int status = 0;
      struct rusage usage {};
      pid_t got = ::wait4(-leader_, &status, WNOHANG, &usage);
      if (got <= 0) break;
      if (got == leader_) leader_reaped_with(status, usage);
    }
    if (!leader_reaped_) return false;
    seen_empty_ = ::kill(-leader_, 0) != 0 && errno == ESRCH;
    return seen_empty_;
  }
  std::string describe() const override { return "process group " + std::to_string(leader_); }

 private:
  void send(int signal) {
    if (seen_empty_ || leader_ <= 0) return;
    ::kill(-leader_, signal);
  }
  bool seen_empty_ = false;
};

}  // namespace

std::unique_ptr<Unit> make_unit(UnitKind kind, CgroupLeafPool* leaves) {
  switch (kind) {
    case UnitKind::cgroup:
      if (leaves == nullptr) throw SpawnError("no cgroup parent");
      try {
        return std::make_unique<CgroupUnit>(leaves->take(), leaves);
      } catch (const std::system_error& e) {
        throw SpawnError(e.what());
      }
    case UnitKind::pid_namespace:
      return std::make_unique<PidNamespaceUnit>();
    case UnitKind::process_group:
      return std::make_unique<ProcessGroupUnit>();
  }
  throw SpawnError("unknown unit");
}

}  // namespace corral::process
