// tests/pool/worker_parts_test.cc: the pieces of a worker's OS side, alone:
// its stderr as bounded lines, its wait status, its launch.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pool/stderr_lines.hpp"
#include "pool/worker_exit.hpp"
#include "pool/worker_process.hpp"

namespace corral::pool {
namespace {

std::vector<std::string> feed_all(StderrLines& lines, std::string_view bytes) {
  std::vector<std::string> out;
  auto sink = [&](std::string line) { out.push_back(std::move(line)); };
  lines.feed(bytes, sink);
  lines.end(sink);
  return out;
}

TEST(StderrLines, SplitsOnNewlinesAndKeepsAnUnfinishedLastLine) {
  StderrLines lines(1 << 20);
  EXPECT_EQ(feed_all(lines, "one\ntwo\nthree"), (std::vector<std::string>{"one", "two", "three"}));
}

TEST(StderrLines, ALineArrivingInPiecesIsOneLine) {
  StderrLines lines(1 << 20);
  std::vector<std::string> out;
  auto sink = [&](std::string line) { out.push_back(std::move(line)); };
  lines.feed("hel", sink);
  EXPECT_TRUE(out.empty());
  lines.feed("lo\n", sink);
  EXPECT_EQ(out, std::vector<std::string>{"hello"});
}

TEST(StderrLines, ALongLineIsCutBetweenCharactersAndMarked) {
  StderrLines lines(1 << 20);
  // 4095 bytes of 'a' then a 2-byte character straddling the 4096 boundary.
  std::string text(StderrLines::kMaxLine - 1, 'a');
  text += "\xc3\xa9";  // é
  text += std::string(10'000, 'b');
  text += "\nnext\n";
  const std::vector<std::string> out = feed_all(lines, text);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], std::string(StderrLines::kMaxLine - 1, 'a') + " [cut]");
  EXPECT_EQ(out[1], "next");
}

TEST(StderrLines, PastTheLimitOneLineSaysSoAndTheRestIsDropped) {
  StderrLines lines(10);
  const std::vector<std::string> out = feed_all(lines, "12345\n67890\nabc\ndef\n");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], "12345");
  EXPECT_EQ(out[1], "further stderr dropped (past worker_stderr_limit, 10 bytes)");
}

TEST(StderrLines, BytesThatAreNotUtf8AreReplaced) {
  StderrLines lines(1 << 20);
  const std::vector<std::string> out = feed_all(lines, "bad \xff\xfe end\n");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].find('\xff'), std::string::npos);
  EXPECT_NE(out[0].find("bad "), std::string::npos);
  EXPECT_NE(out[0].find(" end"), std::string::npos);
}

int status_of(pid_t pid) {
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, 0), pid);
  return status;
}

TEST(WorkerExit, ReadsASignalDirectlyAndThroughTheReaper) {
  pid_t child = ::fork();
  if (child == 0) {
    ::signal(SIGSEGV, SIG_DFL);  // sanitizers install their own handler and exit 1
    ::raise(SIGSEGV);
    ::_exit(0);
  }
  const int segv = status_of(child);
  EXPECT_EQ(death_signal(segv), SIGSEGV);
  EXPECT_TRUE(is_fault(death_signal(segv)));
  EXPECT_NE(describe_status(segv).find("signal 11"), std::string::npos);

  child = ::fork();
  if (child == 0) ::_exit(128 + SIGKILL);  // a reaper whose worker was killed
  const int reaped = status_of(child);
  EXPECT_EQ(death_signal(reaped), SIGKILL);
  EXPECT_FALSE(is_fault(SIGKILL));
  EXPECT_EQ(describe_status(reaped), "exited with status 137");

  child = ::fork();
  if (child == 0) ::_exit(3);
  EXPECT_EQ(death_signal(status_of(child)), 0);
}

TEST(WorkerProcess, AMissingBinaryIsAnErrorThatNamesItAndLeavesNothingOpen) {
  Options options;
  options.worker_command = {"/nonexistent/corral-engine", "worker"};
  const auto fds_before = [] {
    int n = 0;
    for (int fd = 0; fd < 1024; ++fd) n += ::fcntl(fd, F_GETFD) != -1;
    return n;
  };
  const int before = fds_before();
  try {
    launch_worker(options);
    FAIL() << "launched a worker from a binary that does not exist";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "posix_spawn /nonexistent/corral-engine: No such file or directory");
  }
  EXPECT_EQ(fds_before(), before);
}

TEST(WorkerProcess, TheArgumentsCarryTheOptionsAWorkerReads) {
  Options options;
  options.worker_command = {"/bin/corral-engine", "worker"};
  options.max_frame = 1234;
  options.worker_memory_ceiling = 0;
  options.harden_workers = false;
  EXPECT_EQ(worker_arguments(options),
            (std::vector<std::string>{"/bin/corral-engine", "worker", "--ipc-fd=3",
                                      "--max-frame=1234", "--no-harden"}));
  options.worker_memory_ceiling = 1 << 30;
  options.harden_workers = true;
  EXPECT_EQ(worker_arguments(options)[4], "--memory-ceiling=1073741824");
}

}  // namespace
}  // namespace corral::pool
