// tests/process/limits_test.cc: the unit's resource limits (pids, memory,
// cpu), observed from inside hostile commands.
#include <gtest/gtest.h>

#include "corral/process.hpp"

namespace corral::process {
namespace {

TEST(Limits, ProcessesAreBoundedByDefault) {
  const ResourceLimits limits;
  ASSERT_TRUE(limits.processes.has_value());
  EXPECT_EQ(*limits.processes, 256u);
  EXPECT_FALSE(Confinement::none().limits.processes.has_value());
}

}  // namespace
}  // namespace corral::process
