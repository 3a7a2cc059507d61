// tests/apps/run_memory_test.cc: hostile guests through the `corral run`
// binary itself, in-process as users run it. Each case asserts the exit
// status, the failure code on stderr and the process's peak RSS (wait4's
// ru_maxrss), bounded by the run's limit plus a documented overhead
// (docs/sandbox.md, "Memory"); the in-process guarantees and what holds only
// in the pool are listed there. tests/daemon and tests/pool try the same
// classes through `corral serve` and the pool.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

extern char** environ;

namespace {

const std::string kCorral = CORRAL_BINARY;

constexpr long kLimitMiB = 32;
// A fresh `corral run` (V8, ICU data, the libraries) resident before its
// run, plus the heap's own slack, plus under ASan its shadow memory.
// The run's timeout: no case needs it in a release build (the slowest ends
// in 0.7 s), but the instrumented engine walks a huge value ~10x slower.
#if defined(__SANITIZE_ADDRESS__)
constexpr long kOverheadMiB = 160 + 512;
constexpr const char* kTimeout = "60s";
#else
constexpr long kOverheadMiB = 160;
constexpr const char* kTimeout = "5s";
#endif

struct Ran {
  int status = -1;
  std::string err;
  long peak_mib = 0;
};

std::string temp_path(const char* stem) {
  std::string path = std::string("/tmp/") + stem + "-XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd >= 0) ::close(fd);
  return path;
}

Ran run_code(const std::string& code, const std::string& timeout = kTimeout) {
  const std::string in = temp_path("corral-run-in"), err = temp_path("corral-run-err");
  std::ofstream(in) << code;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, in.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_TRUNC, 0);
  const std::string limit = std::to_string(kLimitMiB) + "MiB";
  const char* argv[] = {kCorral.c_str(), "run", "--memory-limit", limit.c_str(), "--timeout",
                        timeout.c_str(), "-",   nullptr};
  Ran ran;
  pid_t pid = 0;
  if (::posix_spawn(&pid, argv[0], &actions, nullptr, const_cast<char**>(argv), environ) == 0) {
    int status = 0;
    struct rusage usage {};
    if (::wait4(pid, &status, 0, &usage) == pid) {
      ran.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      ran.peak_mib = usage.ru_maxrss / 1024;
    }
  }
  posix_spawn_file_actions_destroy(&actions);
  std::stringstream text;
  text << std::ifstream(err).rdbuf();
  ran.err = text.str();
  std::remove(in.c_str());
  std::remove(err.c_str());
  return ran;
}

struct Case {
  const char* name;
  const char* code;
  const char* failure;  // "corral: CODE:" on stderr
};

class RunMemory : public ::testing::TestWithParam<Case> {};

TEST_P(RunMemory, EndsTypedWithinTheLimitPlusOverhead) {
  const Case& c = GetParam();
  const Ran ran = run_code(c.code);
  EXPECT_EQ(ran.status, 1) << ran.err;
  EXPECT_NE(ran.err.find(std::string("corral: ") + c.failure + ":"), std::string::npos) << ran.err;
  EXPECT_LT(ran.peak_mib, kLimitMiB + kOverheadMiB) << "peak RSS " << ran.peak_mib << " MiB";
  RecordProperty("peak_mib", std::to_string(ran.peak_mib));
}

// Each grew `corral run` to between 0.5 and 2+ GB, looped past its timeout,
// or ended the process on a V8 fatal error, before the fix named.
INSTANTIATE_TEST_SUITE_P(
    Hostile, RunMemory,
    ::testing::Values(
        // The value, bounded before it is copied out of the isolate.
        Case{"RopeAsValue", "'x'.repeat((1 << 29) - 24)", "memory_limit"},
        Case{"EscapesGrowTheValue", "'\\u0001'.repeat(8 << 20)", "memory_limit"},
        Case{"SparseArrayAsValue", "new Array(2 ** 32 - 1)", "memory_limit"},
        Case{"ManyLongKeys",
             "const o = {}; const k = '\\u0001'.repeat(1000);"
             "for (let i = 0; i < 8000; i++) o[k + i] = 0; o",
             "memory_limit"},
        // Console lines, bounded by what the channel keeps; then the heap.
        Case{"ConsoleFlood",
             "const s = 'x'.repeat(1 << 20); for (let i = 0; i < 4000; i++) console.log(s);"
             "throw new Error('flooded')",
             "guest_error"},
        Case{"HeapGrowth", "const keep = []; for (;;) keep.push('z'.repeat(1 << 16) + keep.length)",
             "memory_limit"},
        // Native loops routed where termination lands, or refused their length.
        Case{"SpreadIntlSegments",
             "[...new Intl.Segmenter('en', {granularity: 'word'}).segment('ab '.repeat(2e5))]",
             "memory_limit"},
        Case{"SortOfAHugeArrayLike", "Array.prototype.sort.call({length: 2 ** 28})", "guest_error"},
        Case{"SplitIntoTooManyCharacters", "'x'.repeat(2 ** 28).split('')", "guest_error"},
        Case{"StringifyWithASparseReplacer",
             "const a = []; a[2 ** 32 - 2] = 1; JSON.stringify({}, a)", "guest_error"}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

}  // namespace
