// tests/process/containment_test.cc: every clause of the supervisor, run in
// each containment unit this host offers (all three on a root Linux host).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "process/test_util.hpp"

namespace corral::process {
namespace {

using namespace std::chrono_literals;
using testing::alive;
using testing::background_recording_pid;
using testing::cancelling;
using testing::read_pids;
using testing::ReadyFifo;
using testing::TempDir;

// These tests are about the supervisor and its units, not confinement: the
// host profile, so a command sees the test's fifos and files.
Command shell(const std::string& script) {
  return Command{{"/bin/sh", "-c", script}, Hardening::host()};
}

class Containment : public testing::EachUnit {
 protected:
  SupervisorOptions options() const {
    SupervisorOptions o = unit_options();
    o.cleanup_budget = 2s;
    return o;
  }
};

TEST_P(Containment, ReportsTheForcedUnit) {
  Supervisor supervisor(options());
  EXPECT_EQ(supervisor.status().unit, GetParam());
}

TEST_P(Containment, CapturesBothStreamsAndExitCode) {
  Supervisor supervisor(options());
  Execution e = supervisor.run(shell("echo out; echo err >&2"));
  EXPECT_EQ(e.stdout_text(), "out\n");
  EXPECT_EQ(e.stderr_text(), "err\n");
  EXPECT_EQ(e.exit_code(), 0);
  EXPECT_FALSE(e.failed());
  EXPECT_FALSE(e.stdout_truncated());
  EXPECT_EQ(e.usage().output_bytes, 8u);
  EXPECT_GT(e.usage().wall_time, 0);
  EXPECT_EQ(supervisor.status().running, 0);
}

TEST_P(Containment, StdinIsTheNullDevice) {
  Supervisor supervisor(options());
  Execution e = supervisor.run(Command{{"cat"}, {}});
  EXPECT_EQ(e.stdout_text(), "");
  EXPECT_EQ(e.exit_code(), 0);
}

TEST_P(Containment, NonZeroExitIsCommandFailedWithOutput) {
  Supervisor supervisor(options());
  try {
    supervisor.run(shell("echo partial; echo oops >&2; exit 3"));
    FAIL() << "expected command_failed";
  } catch (const CommandError& e) {
    EXPECT_EQ(e.code(), FailureCode::command_failed);
    ASSERT_TRUE(e.execution());
    EXPECT_EQ(e.execution()->exit_code(), 3);
    EXPECT_EQ(e.execution()->stdout_text(), "partial\n");
    EXPECT_EQ(e.execution()->stderr_text(), "oops\n");
    EXPECT_TRUE(e.execution()->failed());
  }
}

TEST_P(Containment, KilledBySignalReportsShellStyleStatus) {
  Supervisor supervisor(options());
  try {
    supervisor.run(shell("kill -9 $$"));
    FAIL() << "expected command_failed";
  } catch (const CommandError& e) {
    EXPECT_EQ(e.execution()->exit_code(), 128 + 9);
  }
}

TEST_P(Containment, DeadlineEndsInTimeoutWithOutput) {
  auto o = options();
  o.deadline = 300ms;
  Supervisor supervisor(o);
  auto start = Clock::now();
  try {
    supervisor.run(shell("echo started; exec sleep 600"));
    FAIL() << "expected timeout";
  } catch (const TrapError& e) {
    EXPECT_EQ(e.code(), FailureCode::timeout);
    EXPECT_EQ(e.execution()->stdout_text(), "started\n");
    EXPECT_FALSE(e.execution()->exit_code().has_value());
  }
  EXPECT_LT(Clock::now() - start, 2s);
  EXPECT_EQ(supervisor.status().running, 0);
}

TEST_P(Containment, CallerDeadlineShortensTheRun) {
  Supervisor supervisor(options());
  RunOptions run;
  run.deadline = Clock::now() + 200ms;
  EXPECT_THROW(supervisor.run(shell("exec sleep 600"), run), TimeoutError);
}

TEST_P(Containment, CancelFromAnotherThread) {
  TempDir dir;
  ReadyFifo ready(dir);
  Supervisor supervisor(options());
  CancelSource cancel;
  std::thread canceller([&] {
    ready.wait();
    cancel.cancel();
  });
  try {
    supervisor.run(shell("echo before; echo ready >" + ready.path() + "; exec sleep 600"),
                   cancelling(cancel));
    FAIL() << "expected cancelled";
  } catch (const TrapError& e) {
    EXPECT_EQ(e.code(), FailureCode::cancelled);
    EXPECT_EQ(e.execution()->stdout_text(), "before\n");
  }
  canceller.join();
}

TEST_P(Containment, CancelTakesEveryGrandchild) {
  TempDir dir;
  ReadyFifo ready(dir);
  std::string pids = dir.file("pids");
  Supervisor supervisor(options());
  CancelSource cancel;
  std::thread canceller([&] {
    ready.wait();
    cancel.cancel();
  });
  std::string script = ": >" + pids + "\n" +  // the loop below reads it at once
                       background_recording_pid(pids, "sleep 600") + "\n" +
                       background_recording_pid(pids, "sleep 600") + "\n" + "while [ $(wc -l <" +
                       pids + ") -lt 2 ]; do :; done\n" + "echo ready >" + ready.path() +
                       "\nwait\n";
  auto start = Clock::now();
  EXPECT_THROW(supervisor.run(shell(script), cancelling(cancel)), TrapError);
  canceller.join();
  EXPECT_LT(Clock::now() - start, 10s);
  auto recorded = read_pids(pids);
  ASSERT_EQ(recorded.size(), 2u);
  for (int pid : recorded) EXPECT_FALSE(alive(pid)) << "grandchild " << pid << " survived";
}

TEST_P(Containment, SetsidGrandchildIsHeldWhereTheUnitCan) {
  TempDir dir;
  ReadyFifo ready(dir);
  std::string pids = dir.file("pids");
  Supervisor supervisor(options());
  CancelSource cancel;
  std::thread canceller([&] {
    ready.wait();
    cancel.cancel();
  });
  std::string script = background_recording_pid(pids, "setsid sleep 600") + "\n" + "while [ ! -s " +
                       pids + " ]; do :; done\n" +
                       // setsid execs sleep once it has left the session
                       "p=$(cat " + pids +
                       "); while [ \"$(ps -o comm= -p $p)\" != sleep ]; do :; done\n" +
                       "echo ready >" + ready.path() + "\nwait\n";
  EXPECT_THROW(supervisor.run(shell(script), cancelling(cancel)), TrapError);
  canceller.join();
  auto recorded = read_pids(pids);
  ASSERT_EQ(recorded.size(), 1u);
  if (GetParam() == UnitKind::process_group) {
    // Documented limitation: a new session leaves the process group.
    EXPECT_TRUE(alive(recorded[0]));
    ::kill(recorded[0], SIGKILL);
  } else {
    EXPECT_FALSE(alive(recorded[0])) << "setsid grandchild escaped " << to_string(GetParam());
  }
}

TEST_P(Containment, SigtermIgnorerIsKilledHalfwayThroughCleanup) {
  TempDir dir;
  ReadyFifo ready(dir);
  auto o = options();
  o.cleanup_budget = 1s;
  Supervisor supervisor(o);
  CancelSource cancel;
  Clock::time_point cancelled_at;
  std::thread canceller([&] {
    ready.wait();
    cancelled_at = Clock::now();
    cancel.cancel();
  });
  try {
    supervisor.run(shell("trap '' TERM; echo ready >" + ready.path() + "; exec sleep 600"),
                   cancelling(cancel));
    FAIL() << "expected cancelled";
  } catch (const TrapError& e) {
    EXPECT_EQ(e.code(), FailureCode::cancelled);
  }
  auto took = Clock::now() - cancelled_at;
  canceller.join();
  EXPECT_GE(took, 450ms);  // SIGTERM was ignored until the halfway point
  EXPECT_LT(took, 1s);     // and SIGKILL then ended it within the budget
  EXPECT_EQ(supervisor.status().cleanup_failed, 0);
}

TEST_P(Containment, LeftoversAreKilledWhenTheCommandExits) {
  TempDir dir;
  std::string pids = dir.file("pids");
  Supervisor supervisor(options());
  auto start = Clock::now();
  // The background sleep keeps stdout open; the run must not wait for it.
  Execution e = supervisor.run(shell(background_recording_pid(pids, "sleep 600") +
                                     "\nwhile [ ! -s " + pids + " ]; do :; done; echo done"));
  EXPECT_EQ(e.stdout_text(), "done\n");
  EXPECT_LT(Clock::now() - start, 5s);
  auto recorded = read_pids(pids);
  ASSERT_EQ(recorded.size(), 1u);
  EXPECT_FALSE(alive(recorded[0]));
}

TEST_P(Containment, ReportsCpuTime) {
  Supervisor supervisor(options());
  Execution e = supervisor.run(shell("i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"));
  EXPECT_GT(e.usage().cpu_time, 0.01);
  EXPECT_GT(e.usage().memory_peak, 0u);
}

INSTANTIATE_TEST_SUITE_P(AllUnits, Containment, testing::every_unit_kind(), testing::unit_name);

}  // namespace
}  // namespace corral::process
