// tests/process/output_test.cc: the retained-output budget.
#include <gtest/gtest.h>

#include "process/test_util.hpp"

namespace corral::process {
namespace {

using namespace std::chrono_literals;
using testing::shell;

TEST(OutputBudget, OneGiBFloodKeepsOneMiBAndFinishesPromptly) {
  Supervisor supervisor;
  auto start = Clock::now();
  Execution e = supervisor.run(Command{{"head", "-c", "1073741824", "/dev/zero"}, {}});
  EXPECT_LT(Clock::now() - start, 20s);
  EXPECT_EQ(e.stdout_text().size(), 1u << 20);
  EXPECT_TRUE(e.stdout_truncated());
  EXPECT_FALSE(e.stderr_truncated());
  EXPECT_EQ(e.usage().output_bytes, 1ull << 30);
  EXPECT_EQ(e.exit_code(), 0);
}

TEST(OutputBudget, IsSharedAcrossBothStreams) {
  SupervisorOptions options;
  options.output_budget = 1000;
  Supervisor supervisor(options);
  Execution e = supervisor.run(shell("head -c 700 /dev/zero; head -c 700 /dev/zero >&2"));
  EXPECT_EQ(e.stdout_text().size() + e.stderr_text().size(), 1000u);
  EXPECT_EQ(e.stdout_text().size(), 700u);
  EXPECT_FALSE(e.stdout_truncated());
  EXPECT_TRUE(e.stderr_truncated());
  EXPECT_EQ(e.usage().output_bytes, 1400u);
}

TEST(OutputBudget, ExactlyTheBudgetIsNotTruncated) {
  SupervisorOptions options;
  options.output_budget = 4096;
  Supervisor supervisor(options);
  Execution e = supervisor.run(Command{{"head", "-c", "4096", "/dev/zero"}, {}});
  EXPECT_EQ(e.stdout_text().size(), 4096u);
  EXPECT_FALSE(e.stdout_truncated());
}

TEST(OutputBudget, FloodStillHonoursTheDeadline) {
  SupervisorOptions options;
  options.deadline = 300ms;
  Supervisor supervisor(options);
  auto start = Clock::now();
  try {
    supervisor.run(Command{{"cat", "/dev/zero"}, {}});
    FAIL();
  } catch (const TimeoutError& e) {
    EXPECT_TRUE(e.execution()->stdout_truncated());
    EXPECT_EQ(e.execution()->stdout_text().size(), 1u << 20);
  }
  EXPECT_LT(Clock::now() - start, 3s);
}

}  // namespace
}  // namespace corral::process
