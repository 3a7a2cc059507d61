// tests/process/confinement_test.cc: the confinement profile, observed from
// inside hostile commands.
#include <gtest/gtest.h>

#include "corral/process.hpp"

namespace corral::process {
namespace {

TEST(Confinement, DeniesByDefault) {
  const Hardening hardening;
  EXPECT_TRUE(hardening.confinement.user_namespace);
  EXPECT_TRUE(hardening.confinement.seccomp);
  EXPECT_TRUE(hardening.confinement.pid_namespace);
  EXPECT_FALSE(hardening.confinement.network);
  EXPECT_EQ(hardening.confinement.filesystem, FilesystemView::minimal);
  ASSERT_TRUE(hardening.environment_allow.has_value());
  EXPECT_TRUE(hardening.environment_allow->empty());
}

}  // namespace
}  // namespace corral::process
