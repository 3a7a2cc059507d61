// tests/process/test_util.hpp: helpers for tests that run real processes.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "corral/process.hpp"
#include "process/spawned.hpp"

namespace corral::process::testing {

// TempDir: a fresh directory, removed with its contents on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "corral-test-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// ReadyFifo: a named pipe a child writes a line to once it is set up. The
// test waits on the event (with a generous bound), never on a sleep.
class ReadyFifo {
 public:
  explicit ReadyFifo(const TempDir& dir) : path_(dir.file("ready")) {
    ::mkfifo(path_.c_str(), 0600);
    fd_ = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  }
  ~ReadyFifo() { ::close(fd_); }
  const std::string& path() const { return path_; }
  // True once a line arrived within `bound`.
  bool wait(std::chrono::milliseconds bound = std::chrono::seconds(20)) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(bound.count())) <= 0) return false;
    char buffer[256];
    return ::read(fd_, buffer, sizeof buffer) > 0;
  }

 private:
  std::string path_;
  int fd_ = -1;
};

// True iff `pid` names a live (non-zombie) process.
inline bool alive(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return false;
  std::string line;
  std::getline(stat, line);
  auto close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return false;
  char state = line[close + 2];
  return state != 'Z' && state != 'X';
}

// The parent of a live `pid` (from /proc/PID/stat), nullopt when it is gone.
inline std::optional<int> parent_of(int pid) {
  if (!alive(pid)) return std::nullopt;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const std::size_t close = stat.rfind(')');
  int ppid = 0;
  if (close == std::string::npos || std::sscanf(stat.c_str() + close + 1, " %*c %d", &ppid) != 1)
    return std::nullopt;
  return ppid;
}

// Pids written one per line to `path` by a script.
inline std::vector<int> read_pids(const std::string& path) {
  std::ifstream in(path);
  std::vector<int> pids;
  int pid;
  while (in >> pid) pids.push_back(pid);
  return pids;
}

// Shell snippet: run `command` in the background after appending its host
// pid (not the pid-namespace one) to `pid_file`.
inline std::string background_recording_pid(const std::string& pid_file,
                                            const std::string& command) {
  return "sh -c 'read p rest </proc/self/stat; echo $p >>" + pid_file + "; exec " + command + "' &";
}

// Polls `condition` until true or `bound` passes.
inline bool eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds bound = std::chrono::seconds(10)) {
  auto until = std::chrono::steady_clock::now() + bound;
  while (std::chrono::steady_clock::now() < until) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return condition();
}

inline RunOptions cancelling(const CancelSource& cancel) {
  RunOptions options;
  options.cancel = cancel;
  return options;
}

inline Command shell(const std::string& script) { return Command{{"/bin/sh", "-c", script}, {}}; }

// Every unit this host offers (the parameter list of unit-wide tests).
inline std::vector<UnitKind> units_here() { return available_units(); }

// Every unit kind, available here or not: the parameter list of EachUnit
// suites (a kind this host lacks is skipped by name, not left out).
inline auto every_unit_kind() {
  return ::testing::Values(UnitKind::cgroup, UnitKind::pid_namespace, UnitKind::process_group);
}

// A suite run once per unit kind: skips a kind this host does not offer and
// gives a supervisor forced to it.
class EachUnit : public ::testing::TestWithParam<UnitKind> {
 protected:
  void SetUp() override {
    auto units = available_units();
    if (std::find(units.begin(), units.end(), GetParam()) == units.end()) {
      GTEST_SKIP() << to_string(GetParam()) << " is not available on this host";
    }
  }
  SupervisorOptions unit_options() const {
    SupervisorOptions o;
    o.unit = GetParam();
    return o;
  }
};

inline std::string unit_name(const ::testing::TestParamInfo<UnitKind>& info) {
  return std::string(to_string(info.param));
}

}  // namespace corral::process::testing
