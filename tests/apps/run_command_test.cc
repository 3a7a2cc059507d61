// `corral run` end to end: the real binary, real pipes.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace {

struct Result {
  int status;
  std::string out;
};

Result shell(const std::string& command) {
  Result result{-1, ""};
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer{};
  while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) {
    result.out.append(buffer.data(), n);
  }
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

const std::string kCorral = CORRAL_BINARY;
const std::string kExample = CORRAL_SOURCE_DIR "/examples/hello.js";

TEST(RunCommand, RunsTheQuickStartExample) {
  const Result r = shell(kCorral + " run " + kExample + " 2>/dev/null");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out,
            "the first ten primes: [ 2, 3, 5, 7, 11, 13, 17, 19, 23, 29 ]\n"
            "{\"primes\":[2,3,5,7,11,13,17,19,23,29],\"sum\":129}\n");
}

TEST(RunCommand, JsonPrintsTheWholeExecution) {
  const Result r = shell(kCorral + " run --json " + kExample);
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("\"stderr\":\"Date.now() is 0 in the hermetic profile\\n\""),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"failed\":false"), std::string::npos) << r.out;
}

// --json parses the value into the envelope: 128 levels (the documented
// depth) must arrive whole, for JavaScript and Ruby (Boost's default parse
// depth made them null).
TEST(RunCommand, JsonKeepsAValueNestedToTheDocumentedDepth) {
  const std::string deep = std::string(128, '[') + "0" + std::string(128, ']');
  const Result js = shell("echo 'let v = 0; for (let i = 0; i < 128; i++) v = [v]; v' | " +
                          kCorral + " run --json -");
  EXPECT_EQ(js.status, 0) << js.out;
  EXPECT_NE(js.out.find("\"value\":" + deep + ","), std::string::npos) << js.out;
  const Result rb = shell("echo 'v = 0; 128.times { v = [v] }; v' | " + kCorral +
                          " run --language ruby --json -");
  EXPECT_EQ(rb.status, 0) << rb.out;
  EXPECT_NE(rb.out.find("\"value\":" + deep + ","), std::string::npos) << rb.out;
}

TEST(RunCommand, FailureExitsNonZeroWithTheCodeOnStderr) {
  const Result r = shell("echo 'while (true) {}' | " + kCorral + " run --timeout 100ms - 2>&1");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("corral: timeout:"), std::string::npos) << r.out;
  const Result json =
      shell("echo 'throw new Error(\"x\")' | " + kCorral + " run --json - 2>/dev/null");
  EXPECT_EQ(json.status, 1);
  EXPECT_NE(json.out.find("\"code\":\"guest_error\""), std::string::npos) << json.out;
}

TEST(RunCommand, BadFlagsAreInvalidRequests) {
  const Result r = shell(kCorral + " run --memory-limit 0 " + kExample + " 2>&1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("invalid_request: --memory-limit"), std::string::npos) << r.out;
  const Result profile = shell(kCorral + " run --profile lax " + kExample + " 2>&1");
  EXPECT_EQ(profile.status, 2);
  const Result missing = shell(kCorral + " run /no/such/file.js 2>&1");
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.out.find("cannot read"), std::string::npos) << missing.out;
}

TEST(RunCommand, CodeModeAcceptsAnAsyncArrow) {
  const Result r = shell("echo 'async () => { console.log(\"in\"); return [1, 2]; }' | " + kCorral +
                         " run --code-mode -");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "in\n[1,2]\n");
}

}  // namespace

namespace {

TEST(CheckCommand, ReportsTheWorkerProtections) {
  const Result r = shell(kCorral + " check");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("no_new_privs           active"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("seccomp allow-list     active"), std::string::npos) << r.out;
  const Result json = shell(kCorral + " check --json");
  EXPECT_EQ(json.status, 0);
  EXPECT_NE(json.out.find("\"seccomp\":true"), std::string::npos) << json.out;
}

}  // namespace
