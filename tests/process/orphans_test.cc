// tests/process/orphans_test.cc: the orphan rule with real processes. This
// test process is made a child subreaper, so a grandchild whose parent
// exits becomes its child, as a daemon's do.
#include "process/orphans.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "gtest/gtest.h"

extern char** environ;

namespace corral::process {
namespace {

using namespace std::chrono_literals;

pid_t spawn_shell(const std::string& script, int fd3 = -1, int fd4 = -1) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (fd3 >= 0) posix_spawn_file_actions_adddup2(&actions, fd3, 3);
  if (fd4 >= 0) posix_spawn_file_actions_adddup2(&actions, fd4, 4);
  const char* argv[] = {"/bin/sh", "-c", script.c_str(), nullptr};
  pid_t pid = 0;
  EXPECT_EQ(::posix_spawn(&pid, "/bin/sh", &actions, nullptr, const_cast<char**>(argv), environ),
            0);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

// Sweeps until `want` zombies were reaped in all (a zombie has no event of
// its own to await once its parent is not the one watching).
std::size_t sweep_until(std::set<pid_t>& suspects, std::size_t want) {
  std::size_t reaped = 0;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (reaped < want && std::chrono::steady_clock::now() < deadline) {
    reaped += reap_orphans(suspects);
    if (reaped < want) std::this_thread::sleep_for(5ms);
  }
  return reaped;
}

class Orphans : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0); }
};

TEST_F(Orphans, AnOrphanedGrandchildIsReapedOnTheSecondSweep) {
  int hold[2], gone[2];
  ASSERT_EQ(::pipe2(hold, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(gone, O_CLOEXEC), 0);
  // The subshell waits on fd 3 and holds fd 4 (its exit closes it); the
  // shell exits at once, so the subshell re-parents here.
  const pid_t shell = spawn_shell("(read line <&3; :) & echo $! >&4; exit 0", hold[0], gone[1]);
  ::close(hold[0]);
  ::close(gone[1]);
  int status = 0;
  ASSERT_EQ(::waitpid(shell, &status, 0), shell);
  char buffer[32] = {};
  ASSERT_GT(::read(gone[0], buffer, sizeof buffer - 1), 0);
  const pid_t orphan = std::stoi(buffer);
  ::close(hold[1]);  // the orphan reads EOF and exits
  pollfd p{gone[0], POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 10'000), 1);  // its end of `gone` closed: it exited
  ::close(gone[0]);

  std::set<pid_t> suspects;
  EXPECT_EQ(sweep_until(suspects, 1), 1u);
  EXPECT_EQ(process_state(orphan), "") << "the orphan is still there";
  EXPECT_EQ(::waitpid(orphan, nullptr, WNOHANG), -1);  // already reaped
}

TEST_F(Orphans, AChildSomeoneHoldsAPidfdForIsLeftToItsOwner) {
  const pid_t child = spawn_shell("exit 7");
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, child, 0));
  ASSERT_GE(pidfd, 0);
  pollfd p{pidfd, POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 10'000), 1);  // it exited: a zombie until reaped
  std::set<pid_t> suspects;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(reap_orphans(suspects), 0u);
  EXPECT_TRUE(suspects.empty());
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);  // the owner keeps its status
  EXPECT_EQ(WEXITSTATUS(status), 7);
  ::close(pidfd);
}

TEST_F(Orphans, TheReaperThreadSweepsUntilDestroyed) {
  OrphanReaper reaper(10ms);
  int hold[2], gone[2];
  ASSERT_EQ(::pipe2(hold, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(gone, O_CLOEXEC), 0);
  // Three grandchildren that outlive the shell, then exit together.
  const pid_t shell =
      spawn_shell("for i in 1 2 3; do (read line <&3; :) & done; exit 0", hold[0], gone[1]);
  ::close(hold[0]);
  ::close(gone[1]);
  int status = 0;
  ASSERT_EQ(::waitpid(shell, &status, 0), shell);
  ::close(hold[1]);
  char byte;
  ASSERT_EQ(::read(gone[0], &byte, 1), 0);  // every holder of `gone` exited
  ::close(gone[0]);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (reaper.reaped() < 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(reaper.reaped(), 3u);
}

}  // namespace
}  // namespace corral::process
