// tests/process/hardening_test.cc: each hardening option, observed from
// inside the command.
#include <gtest/gtest.h>

#include <cstdlib>

#include "process/test_util.hpp"

namespace corral::process {
namespace {

using testing::shell;
using testing::TempDir;

std::string own_link(const char* path) {
  char buffer[256];
  ssize_t n = ::readlink(path, buffer, sizeof buffer);
  return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::string();
}

TEST(Hardening, HostProfileKeepsTheHostNetworkAndDirectory) {
  Supervisor supervisor;
  Execution e = supervisor.run(
      Command{{"/bin/sh", "-c", "readlink /proc/self/ns/net; pwd"}, Hardening::host()});
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof cwd), nullptr);
  EXPECT_EQ(e.stdout_text(), own_link("/proc/self/ns/net") + "\n" + cwd + "\n");
}

TEST(Hardening, NewNetworkNamespaceHasOnlyLoopback) {
  Supervisor supervisor;
  Command command = shell("readlink /proc/self/ns/net; tail -n +3 /proc/net/dev | cut -d: -f1");
  command.hardening.new_network_namespace = true;
  Execution e = supervisor.run(command);
  std::string first_line = e.stdout_text().substr(0, e.stdout_text().find('\n'));
  EXPECT_NE(first_line, own_link("/proc/self/ns/net"));
  std::string interfaces = e.stdout_text().substr(e.stdout_text().find('\n') + 1);
  EXPECT_EQ(interfaces, "    lo\n");
}

TEST(Hardening, RlimitsApplyToTheCommand) {
  Supervisor supervisor;
  Command command =
      shell("grep -E '^Max (cpu time|address space|open files|processes)' /proc/self/limits");
  command.hardening.rlimits.cpu_seconds = 7;
  command.hardening.rlimits.address_space = 1ull << 30;
  command.hardening.rlimits.open_files = 64;
  command.hardening.rlimits.processes = 100;
  Execution e = supervisor.run(command);
  const std::string& out = e.stdout_text();
  EXPECT_NE(out.find("Max cpu time              7                    7"), std::string::npos) << out;
  EXPECT_NE(out.find("Max address space         1073741824           1073741824"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("Max open files            64                   64"), std::string::npos)
      << out;
  EXPECT_NE(out.find("Max processes             100                  100"), std::string::npos)
      << out;
}

TEST(Hardening, CpuLimitStopsABusyLoop) {
  Supervisor supervisor;
  Command command = shell("while :; do :; done");
  command.hardening.rlimits.cpu_seconds = 1;
  try {
    supervisor.run(command);
    FAIL();
  } catch (const CommandError& e) {
    EXPECT_EQ(e.code(), FailureCode::command_failed);
    // Soft and hard limits are equal, so the kernel sends SIGKILL, not SIGXCPU.
    EXPECT_EQ(e.execution()->exit_code(), 128 + SIGKILL);
  }
}

TEST(Hardening, CleanEnvironmentKeepsOnlyTheAllowList) {
  ::setenv("CORRAL_TEST_SECRET", "hunter2", 1);
  Supervisor supervisor;
  Command command{{"/usr/bin/env"}, {}};
  command.hardening.environment_allow = std::vector<std::string>{"PATH", "CORRAL_ABSENT"};
  command.hardening.environment_set = {{"GREETING", "hi"}};
  Execution e = supervisor.run(command);
  std::string expected = std::string("PATH=") + std::getenv("PATH") + "\nGREETING=hi\n";
  EXPECT_EQ(e.stdout_text(), expected);

  // The host profile inherits the environment, but never a CORRAL_* variable.
  ::setenv("HARDENING_TEST_VISIBLE", "1", 1);
  Command inherited{{"/usr/bin/env"}, Hardening::host()};
  std::string out = supervisor.run(inherited).stdout_text();
  EXPECT_EQ(out.find("CORRAL_TEST_SECRET"), std::string::npos) << out;
  EXPECT_NE(out.find("HARDENING_TEST_VISIBLE=1"), std::string::npos) << out;
  ::unsetenv("HARDENING_TEST_VISIBLE");
  ::unsetenv("CORRAL_TEST_SECRET");
}

TEST(Hardening, FixedWorkingDirectory) {
  TempDir dir;
  Supervisor supervisor;
  Command command{{"/bin/pwd"}, Hardening::host()};  // the mapped uid cannot enter a 0700 dir
  command.hardening.working_directory = dir.path();
  EXPECT_EQ(supervisor.run(command).stdout_text(), dir.path() + "\n");

  command.hardening.working_directory = dir.path() + "/missing";
  try {
    supervisor.run(command);
    FAIL();
  } catch (const SetupError& e) {
    EXPECT_EQ(e.code(), FailureCode::unavailable);
    EXPECT_NE(std::string(e.what()).find("chdir"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace corral::process
