// tests/process/limits_test.cc: the unit's resource limits (pids, memory,
// cpu), observed from inside hostile commands, the start-up sweep of a dead
// supervisor's cgroups, and leaf reuse.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "corral/process.hpp"
#include "process/cgroup.hpp"
#include "process/limits.hpp"
#include "test_util.hpp"

namespace corral::process {
namespace {

using namespace std::chrono_literals;
using testing::alive;
using testing::eventually;
using testing::ReadyFifo;
using testing::TempDir;

Command limited(const std::string& script, const ResourceLimits& limits) {
  Command command{{"/bin/sh", "-c", script}, Hardening::host()};
  command.hardening.confinement.limits = limits;
  return command;
}

// Our own cgroup directories on every hierarchy the limits may use.
std::vector<std::string> bases() {
  std::vector<std::string> out;
  if (auto own = own_cgroup2_directory()) out.push_back(*own);
  for (const char* controller : {"pids", "memory", "cpu"})
    if (auto own = own_cgroup_v1_directory(controller)) out.push_back(*own);
  return out;
}

// `corral-<pid>-*` directories (any pid when 0) under our cgroups.
std::vector<std::string> corral_directories(pid_t pid) {
  std::vector<std::string> out;
  std::string prefix = pid == 0 ? "corral-" : "corral-" + std::to_string(pid) + "-";
  for (const auto& base : bases()) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(base, ec)) {
      if (entry.path().filename().string().rfind(prefix, 0) == 0) out.push_back(entry.path());
    }
  }
  return out;
}

// run-* leaves under our corral-<getpid()>-* directories on `base`.
std::vector<std::string> leaves_on(const std::string& base) {
  std::vector<std::string> out;
  std::string prefix = "corral-" + std::to_string(::getpid()) + "-";
  std::error_code ec;
  for (const auto& parent : std::filesystem::directory_iterator(base, ec)) {
    if (parent.path().filename().string().rfind(prefix, 0) != 0) continue;
    for (const auto& leaf : std::filesystem::directory_iterator(parent.path(), ec))
      if (leaf.is_directory()) out.push_back(leaf.path());
  }
  return out;
}

bool v1_available(const char* controller) {
  return own_cgroup_v1_directory(controller).has_value();
}

TEST(Limits, ProcessesAreBoundedByDefault) {
  const ResourceLimits limits;
  ASSERT_TRUE(limits.processes.has_value());
  EXPECT_EQ(*limits.processes, 256u);
  EXPECT_FALSE(Confinement::none().limits.processes.has_value());
}

TEST(Limits, ProtectionsNameTheMechanism) {
  Supervisor supervisor;
  Hardening hardening = Hardening::host();
  hardening.confinement.limits = ResourceLimits{256, 64u << 20, 0.5};
  auto protections = supervisor.protections(hardening);
  int seen = 0;
  for (const auto& p : protections) {
    if (p.name.rfind("limits.", 0) != 0) continue;
    ++seen;
    if (p.name == "limits.processes" && v1_available("pids")) {
      EXPECT_TRUE(p.enforced);
      EXPECT_TRUE(p.detail == "cgroup v1 pids.max=256" || p.detail == "cgroup v2 pids.max=256")
          << p.detail;
    }
    if (p.name == "limits.memory" && v1_available("memory")) {
      EXPECT_TRUE(p.enforced);
      EXPECT_NE(p.detail.find("67108864"), std::string::npos) << p.detail;
    }
    if (p.name == "limits.cpus" && v1_available("cpu")) {
      EXPECT_TRUE(p.enforced);
      EXPECT_NE(p.detail.find("50000"), std::string::npos) << p.detail;
    }
    if (!p.enforced) {
      EXPECT_NE(p.detail.find("not enforced"), std::string::npos);
    }
  }
  EXPECT_EQ(seen, 3);
  // Nothing asked, nothing listed.
  for (const auto& p : supervisor.protections(Hardening::host())) {
    EXPECT_NE(p.name.rfind("limits.", 0), 0u) << p.name;
  }
}

TEST(Limits, ForkBombStaysAtOrUnderPidsMax) {
  if (!v1_available("pids")) GTEST_SKIP() << "no pids controller here";
  constexpr int kMax = 24;
  {
    SupervisorOptions options;
    options.deadline = 2s;
    Supervisor supervisor(options);
    std::atomic<bool> done{false};
    std::atomic<long> highest{0};
    std::atomic<long> samples{0};
    std::thread sampler([&] {
      auto base = own_cgroup_v1_directory("pids");
      while (!done) {
        for (const auto& leaf : leaves_on(*base)) {
          std::string text = read_small_file(leaf + "/pids.current");
          if (text.empty()) continue;
          long current = std::stol(text);
          ++samples;
          if (current > highest) highest = current;
        }
        std::this_thread::sleep_for(1ms);
      }
    });
    try {
      // dash refuses ':' as a function name; the leader stays until the deadline.
      supervisor.run(limited("b(){ b|b& }; b; exec sleep 10", ResourceLimits{kMax, {}, {}}));
    } catch (const Error& e) {
      EXPECT_TRUE(e.code() == FailureCode::timeout || e.code() == FailureCode::command_failed)
          << e.what();
    }
    done = true;
    sampler.join();
    EXPECT_GT(samples.load(), 0);
    EXPECT_LE(highest.load(), kMax);
    EXPECT_GE(highest.load(), kMax - 2) << "the bomb never reached the limit";
    EXPECT_EQ(supervisor.status().running, 0);
  }
  EXPECT_TRUE(corral_directories(::getpid()).empty());
}

TEST(Limits, MemoryHogEndsMemoryLimit) {
  if (!v1_available("memory") && !own_cgroup2_directory()) GTEST_SKIP() << "no memory cgroup";
  Supervisor supervisor;
  Hardening host = Hardening::host();
  host.confinement.limits = ResourceLimits{{}, 64u << 20, {}};
  auto protections = supervisor.protections(host);
  bool enforced = false;
  for (const auto& p : protections)
    if (p.name == "limits.memory") enforced = p.enforced;
  if (!enforced) GTEST_SKIP() << "memory limit not enforced here";
  try {
    supervisor.run(
        limited("echo before; head -c 1G /dev/zero | tail", ResourceLimits{{}, 64u << 20, {}}));
    FAIL() << "the hog finished";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), FailureCode::memory_limit) << e.what();
    ASSERT_NE(e.execution(), nullptr);
    EXPECT_EQ(e.execution()->stdout_text().substr(0, 7), "before\n");
  }
  EXPECT_EQ(supervisor.status().failures.at(FailureCode::memory_limit), 1u);
  // The slot is free and the next run is not limited by the old leaf.
  EXPECT_EQ(supervisor.run(limited("echo ok", {})).stdout_text(), "ok\n");
}

TEST(Limits, HalfACpuHalvesABusyLoop) {
  if (!v1_available("cpu") && !own_cgroup2_directory()) GTEST_SKIP() << "no cpu cgroup";
  SupervisorOptions options;
  options.deadline = 1500ms;
  Supervisor supervisor(options);
  auto share = [&](const ResourceLimits& limits) {
    try {
      supervisor.run(limited("while :; do :; done", limits));
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), FailureCode::timeout);
      const auto& usage = e.execution()->usage();
      return usage.cpu_time / usage.wall_time;
    }
    return 1.0;
  };
  double half = share(ResourceLimits{{}, {}, 0.5});
  double full = share(ResourceLimits{});
  EXPECT_LT(half, 0.65) << "limited " << half << " unlimited " << full;
  // A reused leaf reports only this run's CPU (not the runs before it).
  EXPECT_LT(full, 1.05) << "unlimited " << full;
  // Only meaningful when the loop could get most of a core unlimited.
  if (full > 0.8) {
    EXPECT_LT(half / full, 0.75) << "limited " << half << " unlimited " << full;
  }
}

// A forked child that supervises `script` (with a pids limit, so it gets
// cgroups) until it is killed: the supervisor a test then lets die.
pid_t fork_a_supervisor(const std::string& script) {
  const pid_t child = ::fork();
  if (child != 0) return child;
  SupervisorOptions options;
  options.deadline = 100s;
  Supervisor supervisor(options);
  try {
    supervisor.run(limited(script, ResourceLimits{64, {}, {}}));
  } catch (...) {
  }
  ::_exit(1);
}

TEST(Limits, ASweepKillsWhatADeadSupervisorLeft) {
  TempDir dir;
  ReadyFifo ready(dir);
  std::string pid_file = dir.file("sleep.pid");
  const pid_t child = fork_a_supervisor("setsid sleep 1000 & echo $! >" + pid_file + "; echo up >" +
                                        ready.path() + "; wait");
  ASSERT_GE(child, 0);
  ASSERT_TRUE(ready.wait());
  auto pids = testing::read_pids(pid_file);
  ASSERT_EQ(pids.size(), 1u);
  pid_t sleeper = pids[0];
  EXPECT_TRUE(alive(sleeper));
  EXPECT_FALSE(corral_directories(child).empty());
  ::kill(child, SIGKILL);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  EXPECT_TRUE(alive(sleeper)) << "the sleep should outlive its supervisor until swept";

  { Supervisor sweeper; }
  EXPECT_TRUE(eventually([&] { return !alive(sleeper); }));
  EXPECT_TRUE(corral_directories(child).empty());
  // A zombie that re-parented to us (subreaper) is ours to reap.
  ::waitpid(sleeper, nullptr, WNOHANG);
}

// A command that ran corral itself left a corral-P-N of its own inside its
// leaf: the sweep removes the whole tree, deepest first (a cgroup with a
// child cannot be removed, so a sweep of the leaves alone left the tree,
// and every later supervisor scanned it again, for good).
TEST(Limits, ASweepRemovesCgroupsNestedInADeadSupervisorsLeaves) {
  TempDir dir;
  ReadyFifo ready(dir);
  const pid_t child = fork_a_supervisor("echo up >" + ready.path() + "; sleep 1000");
  ASSERT_GE(child, 0);
  ASSERT_TRUE(ready.wait());
  ::kill(child, SIGKILL);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  const std::vector<std::string> left = corral_directories(child);
  ASSERT_FALSE(left.empty());
  int nested = 0;
  for (const auto& parent : left) {
    std::error_code ec;
    for (const auto& leaf : std::filesystem::directory_iterator(parent, ec)) {
      if (!leaf.is_directory()) continue;
      const auto inner = leaf.path() / "corral-999999-0" / "run-0";
      if (std::filesystem::create_directories(inner, ec)) ++nested;
    }
  }
  ASSERT_GT(nested, 0);

  { Supervisor sweeper; }
  EXPECT_TRUE(corral_directories(child).empty());
}

TEST(Limits, LeavesAreReusedUpToSlots) {
  SupervisorOptions options;
  options.slots = 2;
  Supervisor supervisor(options);
  const ResourceLimits limits{64, {}, {}};
  TempDir dir;
  std::string pid_file = dir.file("bg.pid");
  // Each run leaves a setsid'ed sleep for its unit to kill, and prints the
  // pids its own leaf lists.
  std::string script = "setsid sleep 1000 & echo $! >>" + pid_file +
                       "; cat /proc/self/cgroup | grep -E '^0::|:pids:' | sort";
  std::set<std::string> cgroups;
  for (int i = 0; i < 6; ++i) cgroups.insert(supervisor.run(limited(script, limits)).stdout_text());
  EXPECT_EQ(cgroups.size(), 1u) << "a sequential run did not reuse its leaf";
  for (int pid : testing::read_pids(pid_file)) {
    EXPECT_FALSE(alive(pid)) << pid;
  }

  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) {
        try {
          supervisor.run(limited("sleep 0.05", limits));
          ++ok;
        } catch (const Error& e) {
          EXPECT_EQ(e.code(), FailureCode::busy);
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_GT(ok.load(), 0);
  for (const auto& base : bases()) {
    EXPECT_LE(leaves_on(base).size(), 2u) << base;
    for (const auto& leaf : leaves_on(base)) {
      EXPECT_TRUE(read_small_file(leaf + "/cgroup.procs").empty()) << leaf;
    }
  }
}

TEST(Limits, StrictRefusesALimitItCannotEnforce) {
  Supervisor supervisor;
  Hardening hardening = Hardening::host();
  hardening.confinement.limits = ResourceLimits{16, 64u << 20, 1.0};
  bool all = true;
  for (const auto& p : supervisor.protections(hardening))
    if (p.name.rfind("limits.", 0) == 0 && !p.enforced) all = false;
  hardening.confinement.strict = true;
  Command command{{"/bin/true"}, hardening};
  if (all) {
    EXPECT_NO_THROW(supervisor.run(command));
  } else {
    try {
      supervisor.run(command);
      FAIL() << "strict ran with an unenforced limit";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), FailureCode::unavailable);
      EXPECT_NE(std::string(e.what()).find("limits."), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace corral::process
