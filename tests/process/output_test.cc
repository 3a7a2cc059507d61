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

TEST(OutputUtf8, ByteThatIsNotUtf8BecomesReplacementCharacterAndIsReported) {
  Supervisor supervisor;
  Execution e = supervisor.run(shell("printf 'a\\377b'; printf 'x\\355\\240\\200' >&2"));
  EXPECT_EQ(e.stdout_text(), "a\uFFFDb");
  EXPECT_EQ(e.stderr_text(), "x\uFFFD\uFFFD\uFFFD");  // an encoded surrogate
  EXPECT_TRUE(e.stdout_replaced());
  EXPECT_TRUE(e.stderr_replaced());
  EXPECT_FALSE(e.stdout_truncated());
  EXPECT_EQ(e.usage().output_bytes, 7u);  // bytes read, before replacement
  EXPECT_EQ(e.exit_code(), 0);
}

TEST(OutputUtf8, ValidMultiByteOutputIsNotReported) {
  Supervisor supervisor;
  Execution e = supervisor.run(shell("printf '\\303\\251 \\342\\202\\254'"));
  EXPECT_EQ(e.stdout_text(), "\u00e9 \u20ac");
  EXPECT_FALSE(e.stdout_replaced());
}

TEST(OutputUtf8, BudgetCutsBetweenCharactersNotInsideOne) {
  SupervisorOptions options;
  options.output_budget = 5;
  Supervisor supervisor(options);
  // "abcd€": the budget ends after the euro sign's first byte.
  Execution e = supervisor.run(shell("printf 'abcd\\342\\202\\254'"));
  EXPECT_EQ(e.stdout_text(), "abcd");
  EXPECT_TRUE(e.stdout_truncated());
  EXPECT_FALSE(e.stdout_replaced());
  EXPECT_EQ(e.usage().output_bytes, 7u);
}

TEST(OutputUtf8, TheDefaultOneMiBBudgetCutsBeforeAEuroSignItWouldSplit) {
  Supervisor supervisor;  // issue 14's case: valid UTF-8 cut by the 1 MiB budget
  Execution e = supervisor.run(
      shell("head -c 1048575 /dev/zero | tr '\\0' a; printf '\\342\\202\\254 more'"));
  EXPECT_EQ(e.stdout_text(), std::string(1048575, 'a'));
  EXPECT_TRUE(e.stdout_truncated());
  EXPECT_FALSE(e.stdout_replaced());
  EXPECT_EQ(e.usage().output_bytes, 1048575u + 8);
}

TEST(OutputUtf8, ASplitCharacterTheCommandEndedWithIsReplaced) {
  SupervisorOptions options;
  options.output_budget = 5;
  Supervisor supervisor(options);
  // Within the budget the command itself stopped inside a character.
  Execution e = supervisor.run(shell("printf 'ab\\342\\202'"));
  EXPECT_EQ(e.stdout_text(), "ab\uFFFD");
  EXPECT_FALSE(e.stdout_truncated());
  EXPECT_TRUE(e.stdout_replaced());
}

TEST(OutputUtf8, ReplacementThatGrowsPastTheBudgetIsCutAgain) {
  SupervisorOptions options;
  options.output_budget = 8;
  Supervisor supervisor(options);
  // Four bad bytes fit the budget; as U+FFFD they take twelve.
  Execution e = supervisor.run(shell("printf '\\377\\377\\377\\377'"));
  EXPECT_EQ(e.stdout_text(), "\uFFFD\uFFFD");
  EXPECT_TRUE(e.stdout_truncated());
  EXPECT_TRUE(e.stdout_replaced());
}

}  // namespace
}  // namespace corral::process
