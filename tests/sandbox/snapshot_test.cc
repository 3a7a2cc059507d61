// The process's own startup snapshot (sandbox/v8/platform.hpp): contexts
// made from it are not rehashed, so its hash seed must be one this process
// drew, never the one compiled into libnode, which anyone can read.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <string>

#include "corral/sandbox.hpp"
#include "process/spawned.hpp"

namespace corral::sandbox {
namespace {

using process::testing::read_all;
using process::testing::spawn_piped;

std::string seeded_hash(const char* mode) {
  auto child = spawn_piped({CORRAL_SEEDED_HASH, mode});
  EXPECT_GT(child.pid, 0);
  std::string out = read_all(child.out);
  int status = 0;
  ::waitpid(child.pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << mode << " status " << status;
  return out;
}

TEST(PrivateSnapshot, EachProcessHashesUnderASeedOfItsOwn) {
  const std::string published = seeded_hash("public");
  ASSERT_FALSE(published.empty());
  // The built-in snapshot's seed is the same in every process: what a guest
  // or a tool answer could craft colliding keys against.
  EXPECT_EQ(seeded_hash("public"), published);
  const std::string first = seeded_hash("private");
  const std::string second = seeded_hash("private");
  ASSERT_FALSE(first.empty());
  EXPECT_NE(first, published);
  EXPECT_NE(second, published);
  // Two processes, two seeds (30-bit hashes: a chance collision is one in
  // about a billion).
  EXPECT_NE(first, second);
}

TEST(PrivateSnapshot, ContextsFromItRunGuestsAndSeeTheirGlobals) {
  Sandbox sandbox;
  for (int i = 0; i < 3; ++i) {
    const Execution run = sandbox.eval(
        "const m = new Map([['a', 1]]); const seen = {} instanceof Object && "
        "typeof Intl === 'object'; ({seen, x: m.get('a'), s: new Set([1, 1, 2]).size})");
    EXPECT_EQ(run.value(), R"({"seen":true,"x":1,"s":2})");
  }
}

}  // namespace
}  // namespace corral::sandbox
