// tests/process/supervisor_test.cc: slots, busy, cleanup_failed, shutdown,
// and the endings that never start a command.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

#include "process/faults.hpp"
#include "process/test_util.hpp"

namespace corral::process {
namespace {

using namespace std::chrono_literals;
using testing::alive;
using testing::cancelling;
using testing::eventually;
using testing::ReadyFifo;
using testing::TempDir;

// These tests are about the supervisor and its units, not confinement: the
// host profile, so a command sees the test's fifos and files.
Command shell(const std::string& script) {
  return Command{{"/bin/sh", "-c", script}, Hardening::host()};
}

TEST(SupervisorAdmission, SecondConcurrentCallIsBusyAtOnce) {
  TempDir dir;
  ReadyFifo ready(dir);
  Supervisor supervisor;
  CancelSource cancel;
  auto first = std::async(std::launch::async, [&] {
    try {
      supervisor.run(shell("echo ready >" + ready.path() + "; exec sleep 600"), cancelling(cancel));
    } catch (const Error& e) {
      return e.code();
    }
    return FailureCode::internal;
  });
  ASSERT_TRUE(ready.wait());
  auto start = Clock::now();
  try {
    supervisor.run(shell("true"));
    FAIL() << "expected busy";
  } catch (const CapacityError& e) {
    EXPECT_EQ(e.code(), FailureCode::busy);
    EXPECT_TRUE(e.retryable());
    EXPECT_FALSE(e.execution());
  }
  EXPECT_LT(Clock::now() - start, 100ms);
  // The child can print before the supervisor's thread records its pid
  // (set just after the spawn returns): wait, bounded, for the record.
  Status status = supervisor.status();
  for (auto until = Clock::now() + 5s; status.slot_status[0].pid == 0 && Clock::now() < until;) {
    std::this_thread::yield();
    status = supervisor.status();
  }
  EXPECT_EQ(status.running, 1);
  EXPECT_EQ(status.slot_status[0].state, SlotState::running);
  EXPECT_GT(status.slot_status[0].pid, 0);
  EXPECT_FALSE(status.slot_status[0].unit.empty());
  cancel.cancel();
  EXPECT_EQ(first.get(), FailureCode::cancelled);
  EXPECT_EQ(supervisor.status().running, 0);
  EXPECT_EQ(supervisor.run(shell("echo again")).stdout_text(), "again\n");
}

TEST(SupervisorAdmission, SlotsAreConfigurable) {
  TempDir dir;
  ReadyFifo ready(dir);
  SupervisorOptions options;
  options.slots = 2;
  Supervisor supervisor(options);
  CancelSource cancel;
  auto first = std::async(std::launch::async, [&] {
    EXPECT_THROW(supervisor.run(shell("echo ready >" + ready.path() + "; exec sleep 600"),
                                cancelling(cancel)),
                 TrapError);
  });
  ASSERT_TRUE(ready.wait());
  EXPECT_EQ(supervisor.run(shell("echo second")).stdout_text(), "second\n");
  cancel.cancel();
  first.get();
  EXPECT_EQ(supervisor.status().slots, 2);
}

TEST(SupervisorAdmission, MalformedCommandIsInvalidRequest) {
  Supervisor supervisor;
  try {
    supervisor.run(Command{});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), FailureCode::invalid_request);
  }
  try {
    supervisor.run(Command{{"/bin/echo", std::string("a\0b", 3)}, {}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), FailureCode::invalid_request);
  }
}

TEST(SupervisorAdmission, MissingProgramIsUnavailable) {
  Supervisor supervisor;
  try {
    supervisor.run(Command{{"/nonexistent/program"}, {}});
    FAIL();
  } catch (const SetupError& e) {
    EXPECT_EQ(e.code(), FailureCode::unavailable);
    EXPECT_FALSE(e.execution());
  }
  try {
    supervisor.run(Command{{"corral-no-such-program-anywhere"}, {}});
    FAIL();
  } catch (const SetupError& e) {
    EXPECT_EQ(e.code(), FailureCode::unavailable);
  }
  EXPECT_EQ(supervisor.status().running, 0);
}

TEST(SupervisorAdmission, ExecFailureInsideTheChildIsUnavailable) {
  TempDir dir;
  // Executable bit but no valid format and no #!: exec fails in the child.
  std::string path = dir.file("not-a-program");
  {
    std::ofstream out(path);
    out << "\x7f"
           "ELFgarbage";
  }
  ::chmod(path.c_str(), 0755);
  for (auto unit : available_units()) {
    SupervisorOptions options;
    options.unit = unit;
    Supervisor supervisor(options);
    try {
      supervisor.run(Command{{path}, Hardening::host()});
      FAIL() << to_string(unit);
    } catch (const SetupError& e) {
      EXPECT_EQ(e.code(), FailureCode::unavailable) << to_string(unit);
      EXPECT_NE(std::string(e.what()).find("exec"), std::string::npos) << e.what();
    }
    EXPECT_EQ(supervisor.status().running, 0);
  }
}

TEST(SupervisorAdmission, AlreadyCancelledNeverStarts) {
  Supervisor supervisor;
  CancelSource cancel;
  cancel.cancel();
  EXPECT_THROW(supervisor.run(shell("true"), cancelling(cancel)), TrapError);
  RunOptions past;
  past.deadline = Clock::now() - 1s;
  EXPECT_THROW(supervisor.run(shell("true"), past), TimeoutError);
}

TEST(SupervisorAdmission, UnavailableForcedUnitFailsConstruction) {
  TempDir dir;  // a plain directory is not a cgroup
  SupervisorOptions options;
  options.unit = UnitKind::cgroup;
  options.cgroup_parent = dir.path();
  try {
    Supervisor supervisor(options);
    FAIL();
  } catch (const SetupError& e) {
    EXPECT_EQ(e.code(), FailureCode::unavailable);
  }
  SupervisorOptions bad;
  bad.slots = 0;
  EXPECT_THROW(Supervisor{bad}, std::invalid_argument);
}

TEST(SupervisorAdmission, DefaultsFollowTheContract) {
  SupervisorOptions options;
  EXPECT_EQ(options.slots, 1);
  EXPECT_EQ(options.deadline, std::chrono::minutes(5));
  EXPECT_EQ(options.cleanup_budget, std::chrono::seconds(5));
  EXPECT_EQ(options.output_budget, 1u << 20);
  Supervisor supervisor;
  EXPECT_EQ(supervisor.status().unit, available_units().front());
}

// A unit that cannot be emptied (kills suppressed by the test hook) ends in
// cleanup_failed; the slot stays taken until the re-check sees it empty.
TEST(SupervisorCleanup, UnemptiableUnitKeepsItsSlotUntilSeenEmpty) {
  for (auto unit : available_units()) {
    SCOPED_TRACE(std::string(to_string(unit)));
    auto stuck = std::make_shared<std::atomic<bool>>(true);
    SupervisorOptions options;
    options.unit = unit;
    options.deadline = 200ms;
    options.cleanup_budget = 300ms;
    options.recheck_interval = 20ms;
    options.faults = std::make_shared<const SupervisorFaults>(
        SupervisorFaults{[stuck] { return stuck->load(); }});
    Supervisor supervisor(options);
    try {
      supervisor.run(shell("echo stuck; exec sleep 600"));
      FAIL() << "expected cleanup_failed";
    } catch (const CommandError& e) {
      EXPECT_EQ(e.code(), FailureCode::cleanup_failed);
      EXPECT_EQ(e.execution()->stdout_text(), "stuck\n");
    }
    Status status = supervisor.status();
    EXPECT_EQ(status.cleanup_failed, 1);
    EXPECT_EQ(status.slot_status[0].state, SlotState::cleanup_failed);
    int pid = status.slot_status[0].pid;
    EXPECT_TRUE(alive(pid));
    EXPECT_THROW(supervisor.run(shell("true")), CapacityError);  // the slot is still taken

    stuck->store(false);  // the unit can now be emptied
    EXPECT_TRUE(eventually([&] { return supervisor.status().cleanup_failed == 0; }));
    EXPECT_FALSE(alive(pid));
    EXPECT_EQ(supervisor.run(shell("echo free")).stdout_text(), "free\n");
  }
}

TEST(SupervisorShutdown, CancelsRunsAndClosesAdmission) {
  TempDir dir;
  ReadyFifo ready(dir);
  SupervisorOptions options;
  options.slots = 2;
  Supervisor supervisor(options);
  auto running = std::async(std::launch::async, [&] {
    try {
      supervisor.run(shell("echo ready >" + ready.path() + "; exec sleep 600"));
    } catch (const Error& e) {
      return e.code();
    }
    return FailureCode::internal;
  });
  ASSERT_TRUE(ready.wait());
  auto start = Clock::now();
  EXPECT_TRUE(supervisor.shutdown(Clock::now() + 5s));
  EXPECT_LT(Clock::now() - start, 3s);
  EXPECT_EQ(running.get(), FailureCode::cancelled);
  EXPECT_FALSE(supervisor.status().accepting);
  try {
    supervisor.run(shell("true"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), FailureCode::unavailable);
  }
  EXPECT_TRUE(supervisor.shutdown(Clock::now() + 1s));  // idempotent
}

TEST(SupervisorShutdown, ConcurrentShutdownsAgree) {
  Supervisor supervisor;
  auto a = std::async(std::launch::async, [&] { return supervisor.shutdown(Clock::now() + 1s); });
  auto b = std::async(std::launch::async, [&] { return supervisor.shutdown(Clock::now() + 1s); });
  EXPECT_TRUE(a.get());
  EXPECT_TRUE(b.get());
}

TEST(SupervisorStatus, IsSafeUnderConcurrentRuns) {
  SupervisorOptions options;
  options.slots = 2;
  Supervisor supervisor(options);
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done) (void)supervisor.status();
  });
  for (int i = 0; i < 20; ++i) supervisor.run(Command{{"/bin/true"}, Hardening::host()});
  done = true;
  reader.join();
  EXPECT_EQ(supervisor.status().runs_started, 20u);
  EXPECT_EQ(supervisor.status().runs_failed, 0u);
}

TEST(Supervisor, StatusCountsFailuresByCode) {
  SupervisorOptions options;
  options.deadline = 200ms;
  Supervisor supervisor(options);
  auto code_of = [&](const Command& command) {
    try {
      supervisor.run(command);
    } catch (const Error& e) {
      return e.code();
    }
    return FailureCode::internal;
  };
  EXPECT_EQ(code_of(shell("exit 3")), FailureCode::command_failed);
  EXPECT_EQ(code_of(shell("exit 4")), FailureCode::command_failed);
  EXPECT_EQ(code_of(shell("exec sleep 10")), FailureCode::timeout);
  EXPECT_EQ(code_of(Command{{"/nonexistent/program"}, {}}), FailureCode::unavailable);
  supervisor.run(shell("true"));
  supervisor.shutdown(Clock::now() + 1s);
  EXPECT_EQ(code_of(shell("true")), FailureCode::unavailable);
  Status status = supervisor.status();
  EXPECT_EQ(status.failures.at(FailureCode::command_failed), 2u);
  EXPECT_EQ(status.failures.at(FailureCode::timeout), 1u);
  EXPECT_EQ(status.failures.at(FailureCode::unavailable), 2u);
  EXPECT_EQ(status.failures.count(FailureCode::busy), 0u);
  std::uint64_t sum = 0;
  for (const auto& [code, count] : status.failures) sum += count;
  EXPECT_EQ(sum, status.runs_failed);
}

}  // namespace
}  // namespace corral::process
