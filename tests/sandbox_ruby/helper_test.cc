// The helper process a Ruby Sandbox runs its guests in: an exec'd
// corral-ruby-helper, locked down before any guest runs, found by the rules
// in src/sandbox/ruby/helper.hpp, started safely from a threaded host.
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "sandbox_ruby/test_util.hpp"

namespace corral::sandbox::testing {
namespace {

namespace fs = std::filesystem;

// The helper processes this test process started (by their name).
std::vector<pid_t> ruby_helpers() {
  std::vector<pid_t> helpers;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const auto close = line.rfind(')');
    if (close == std::string::npos || line.find("(corral-ruby)") == std::string::npos) continue;
    // After ") ": the state, then the parent's pid.
    if (std::stoi(line.substr(close + 4)) == ::getpid()) helpers.push_back(std::stoi(name));
  }
  return helpers;
}

std::string status_field(pid_t pid, const std::string& field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(field + ":", 0) == 0)
      return line.substr(line.find_first_not_of(" \t", field.size() + 1));
  }
  return "";
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// mruby is C: a guest that found a memory-safety bug in it would hold the
// helper process. The kernel still refuses it exec, fork, sockets and
// files, and it holds nothing but its socket.
TEST(RubyHelper, IsAnExecdProgramUnderNoNewPrivsAndTheWorkersSeccompFilter) {
  RubySandbox sandbox(ruby_options());
  ASSERT_EQ(sandbox.eval("Time.now.year").value(), "1970");  // hermetic, and alive
  const std::vector<pid_t> helpers = ruby_helpers();
  ASSERT_EQ(helpers.size(), 1u);
  const std::string proc = "/proc/" + std::to_string(helpers[0]);
  EXPECT_EQ(status_field(helpers[0], "NoNewPrivs"), "1");
  EXPECT_EQ(status_field(helpers[0], "Seccomp"), "2");  // filter mode
  // Its own program, not a copy of this one.
  EXPECT_EQ(fs::read_symlink(proc + "/exe").filename(), "corral-ruby-helper");
  EXPECT_NE(fs::read_symlink(proc + "/exe"), fs::read_symlink("/proc/self/exe"));
  std::vector<std::string> fds;
  for (const auto& entry : fs::directory_iterator(proc + "/fd")) {
    fds.push_back(entry.path().filename().string() + " -> " +
                  fs::read_symlink(entry.path()).string());
  }
  ASSERT_EQ(fds.size(), 1u) << ::testing::PrintToString(fds);
  EXPECT_TRUE(fds[0].rfind("3 -> socket:", 0) == 0) << fds[0];
}

TEST(RubyHelper, GetsNoneOfTheHostsEnvironment) {
  const ScopedEnv secret("CORRAL_TEST_SECRET", "hunter2");
  RubySandbox sandbox(ruby_options());
  ASSERT_EQ(sandbox.eval("ENV.to_h.size rescue 0").value(), "0");
  const std::vector<pid_t> helpers = ruby_helpers();
  ASSERT_EQ(helpers.size(), 1u);
  std::ifstream environ("/proc/" + std::to_string(helpers[0]) + "/environ");
  const std::string text((std::istreambuf_iterator<char>(environ)), {});
  EXPECT_EQ(text.find("hunter2"), std::string::npos);
  EXPECT_EQ(text.find("PATH="), std::string::npos);
}

// A fork without exec from a threaded host could leave the child on a lock
// another thread held (glibc's, the sanitizers', V8's). The helper is
// exec'd: started while V8 builds contexts and other threads allocate, it
// always comes up.
TEST(RubyHelper, StartsWhileTheHostsThreadsAllocateAndV8BuildsContexts) {
  std::atomic<bool> stop{false};
  std::atomic<int> js_runs{0};
  std::thread javascript([&] {
    Sandbox js;
    while (!stop) {
      if (js.eval("[1, 2, 3].map(x => x * 2).join()").value() == "\"2,4,6\"") ++js_runs;
    }
  });
  std::thread allocator([&] {
    while (!stop) {
      std::vector<std::string> junk(256, std::string(512, 'x'));
      junk.clear();
    }
  });
  int ok = 0;
  for (int i = 0; i < 20; ++i) {
    RubySandbox sandbox(ruby_options());  // a new helper each time
    if (sandbox.eval("[1, 2].sum + " + std::to_string(i)).value() == std::to_string(3 + i)) ++ok;
  }
  stop = true;
  javascript.join();
  allocator.join();
  EXPECT_EQ(ok, 20);
  EXPECT_GT(js_runs.load(), 0);
}

TEST(RubyHelper, CorralRubyHelperNamesTheProgram) {
  const ScopedEnv helper("CORRAL_RUBY_HELPER", CORRAL_RUBY_HELPER_PATH);
  RubySandbox sandbox(ruby_options());
  EXPECT_EQ(sandbox.eval("6 * 7").value(), "42");
}

TEST(RubyHelper, AMissingProgramFailsUnavailableNamingIt) {
  const ScopedEnv helper("CORRAL_RUBY_HELPER", "/nonexistent/corral-ruby-helper");
  RubySandbox sandbox(ruby_options());
  const Caught caught = expect_failure(FailureCode::unavailable, [&] { sandbox.eval("1"); });
  EXPECT_TRUE(contains(caught.message, "/nonexistent/corral-ruby-helper")) << caught.message;
}

TEST(RubyHelper, AProgramThatIsNoHelperFailsUnavailable) {
  const ScopedEnv helper("CORRAL_RUBY_HELPER", "/bin/true");
  RubySandbox sandbox(ruby_options());
  const Caught caught = expect_failure(FailureCode::unavailable, [&] { sandbox.eval("1"); });
  EXPECT_TRUE(contains(caught.message, "before it was ready")) << caught.message;
}

// A helper from another build (another frame layout) refuses to start.
TEST(RubyHelper, AHelperOfAnotherProtocolRefusesToStart) {
  const std::string command =
      std::string(CORRAL_RUBY_HELPER_PATH) + " corral-ruby-helper/0 " + std::to_string(::getpid());
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 6);  // HelperProcess::kExitMismatch
}

// The helper dies with its host, even in the middle of a guest's loop.
TEST(RubyHelper, DiesWithItsHost) {
  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  const pid_t host = ::fork();
  ASSERT_GE(host, 0);
  if (host == 0) {
    ::alarm(20);
    ::close(report[0]);
    RubySandbox sandbox(ruby_options());
    sandbox.eval("1");
    const std::vector<pid_t> helpers = ruby_helpers();
    const pid_t helper = helpers.size() == 1 ? helpers[0] : 0;
    [[maybe_unused]] ssize_t n = ::write(report[1], &helper, sizeof helper);
    sandbox.eval("loop {}");  // until the parent kills this process
    ::_exit(1);
  }
  ::close(report[1]);
  pid_t helper = 0;
  ASSERT_EQ(::read(report[0], &helper, sizeof helper), static_cast<ssize_t>(sizeof helper));
  ::close(report[0]);
  ASSERT_GT(helper, 0);
  ::kill(host, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(host, &status, 0), host);
  // The helper was the killed host's child: its pidfd turns readable when
  // it ends (a pidfd cannot be had for a process already reaped).
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, helper, 0));
  bool gone = pidfd < 0 && errno == ESRCH;
  if (pidfd >= 0) {
    pollfd ended{pidfd, POLLIN, 0};
    gone = ::poll(&ended, 1, 10'000) == 1;
    ::close(pidfd);
  }
  EXPECT_TRUE(gone);
}

}  // namespace
}  // namespace corral::sandbox::testing
