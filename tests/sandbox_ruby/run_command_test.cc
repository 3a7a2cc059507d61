// `corral run` with Ruby: by file extension, or --language ruby.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace {

struct Result {
  int status = -1;
  std::string out;
};

std::string temp_file(const std::string& name, const std::string& text);

// Runs `corral ARGS`, with `input` on stdin.
Result run(const std::string& args, const std::string& input = "") {
  Result result;
  const std::string in = temp_file("stdin.txt", input);
  const std::string command = std::string(CORRAL_BINARY) + " " + args + " < " + in + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, n);
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// ctest runs these tests as parallel processes sharing TempDir(): a fixed name
// let one test's stdin overwrite another's (a `loop {}` ran where `6 * 7` was
// meant, and timed out). Every file is private to its process and call.
std::string temp_file(const std::string& name, const std::string& text) {
  static int serial = 0;
  const std::string path = ::testing::TempDir() + "corral_ruby_" + std::to_string(::getpid()) +
                           "_" + std::to_string(serial++) + "_" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(RubyRunCommand, RbFilesRunAsRuby) {
  const std::string path = temp_file("hello.rb", "puts 'hi from ' + RUBY_ENGINE\n[1, 2]\n");
  Result r = run("run " + path);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, "hi from mruby\n[1,2]\n");
}

TEST(RubyRunCommand, LanguageFlagSelectsRubyForStdin) {
  Result r = run("run --language ruby -", "6 * 7");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, "42\n");
  Result js = run("run -", "6 * 7");
  EXPECT_EQ(js.out, "42\n");
  Result bad = run("run --language cobol -", "1");
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_NE(bad.out.find("language"), std::string::npos) << bad.out;
}

TEST(RubyRunCommand, TimeoutAndErrorsExitWithTheirCode) {
  Result loop = run("run --language ruby --timeout 200ms -", "loop {}");
  EXPECT_EQ(loop.status, 1);
  EXPECT_NE(loop.out.find("timeout"), std::string::npos) << loop.out;
  Result error = run("run --language ruby --json -", "raise 'boom'");
  EXPECT_EQ(error.status, 1);
  EXPECT_NE(error.out.find("\"guest_error\""), std::string::npos) << error.out;
}

}  // namespace
