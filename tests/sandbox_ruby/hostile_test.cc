// Hostile Ruby: each attempt ends with the right failure code, and the host
// (this test process) and the sandbox stay alive.
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox_ruby/test_util.hpp"

namespace corral::sandbox::testing {
namespace {

Options hostile_options() {
  Options options = ruby_options();
  options.timeout = std::chrono::milliseconds(500);
  options.memory_limit = std::uint64_t{16} << 20;
  return options;
}

void expect_alive(RubySandbox& sandbox) { EXPECT_EQ(sandbox.eval("6 * 7").value(), "42"); }

TEST(RubyHostile, FilesProcessesAndSocketsAreAbsent) {
  RubySandbox sandbox(hostile_options());
  EXPECT_EQ(sandbox
                .eval("%w[File IO Dir Socket BasicSocket TCPSocket TCPServer UDPSocket UNIXSocket "
                      "Addrinfo Process ENV ObjectSpace FileTest Signal Thread]"
                      ".select { |c| Object.const_defined?(c) }")
                .value(),
            "[]");
  EXPECT_EQ(sandbox
                .eval("%i[open system spawn exec fork syscall sleep exit exit! abort require load "
                      "trap select readlines gets __printstr__]"
                      ".select { |m| respond_to?(m, true) }")
                .value(),
            "[]");
  for (const char* attempt :
       {"open('/etc/passwd').read", "system('id')", "`id`", "%x(id)", "IO.popen('id')",
        "File.read('/etc/passwd')", "Socket.new(2, 1, 0)", "TCPSocket.new('127.0.0.1', 80)",
        "exec('/bin/sh')", "fork { }", "require 'socket'", "Object.const_get(:File)",
        "Kernel.send(:open, '/etc/passwd')", "ENV['HOME']", "$stdin.read", "STDIN.gets"}) {
    SCOPED_TRACE(attempt);
    expect_failure(FailureCode::guest_error, [&] { sandbox.eval(attempt); });
  }
  expect_alive(sandbox);
}

TEST(RubyHostile, InfiniteLoopsEndInTimeout) {
  RubySandbox sandbox(hostile_options());
  for (const char* code : {"loop {}", "while true; end", "until false; end",
                           "def f; f2; end; def f2; loop { 1 + 1 }; end; f", "1.step { }",
                           "[1].cycle { }", "begin; loop {}; ensure; loop {}; end"}) {
    SCOPED_TRACE(code);
    expect_failure(FailureCode::timeout, [&] { sandbox.eval(code); });
  }
  expect_alive(sandbox);
}

TEST(RubyHostile, MemoryBombsEndInMemoryLimit) {
  RubySandbox sandbox(hostile_options());
  for (const char* code :
       {"a = []; loop { a << a.dup }", "s = 'ab'; loop { s << s }",
        "h = {}; loop { h[h.size] = 'v' * 64 }", "a = [0]; loop { a = a + a }",
        "Array.new(1 << 40)", "'x'.ljust(1 << 40)",
        "(1..Float::INFINITY).lazy.map { |i| 'x' * i }.to_a", "GC.disable; loop { Object.new }",
        "loop { (1..1000).map(&:to_s).join * 100 }.size rescue nil",
        "Struct.new(*(1..100_000).map { |i| :\"m#{i}\" })"}) {
    SCOPED_TRACE(code);
    try {
      sandbox.eval(code);
      ADD_FAILURE() << "no failure";
    } catch (const Error& e) {
      // A single huge request may also be refused by mruby itself before
      // the allocator is asked (ArgumentError): a guest error, not a crash.
      EXPECT_TRUE(e.code() == FailureCode::memory_limit || e.code() == FailureCode::guest_error ||
                  e.code() == FailureCode::timeout)
          << to_string(e.code()) << ": " << e.what();
      if (e.code() == FailureCode::memory_limit) {
        EXPECT_LE(e.execution()->usage().memory_peak, std::uint64_t{16} << 20);
      }
    }
  }
  expect_alive(sandbox);
}

TEST(RubyHostile, ObjectSpaceGamesFindNothing) {
  RubySandbox sandbox(hostile_options());
  for (const char* code : {"ObjectSpace.each_object(Object) { }", "ObjectSpace.count_objects",
                           "ObjectSpace.garbage_collect", "Object.const_get(:ObjectSpace)"}) {
    SCOPED_TRACE(code);
    expect_failure(FailureCode::guest_error, [&] { sandbox.eval(code); });
  }
  // GC is there and harmless.
  EXPECT_EQ(sandbox.eval("GC.start; GC.disable; GC.enable; :ok").value(), "\"ok\"");
  expect_alive(sandbox);
}

TEST(RubyHostile, FiberGamesEndCleanly) {
  RubySandbox sandbox(hostile_options());
  expect_failure(FailureCode::timeout, [&] {
    sandbox.eval("f = Fiber.new { loop { Fiber.yield } }; loop { f.resume }");
  });
  EXPECT_EQ(sandbox.eval("f = Fiber.new { |x| Fiber.yield(x + 1) }; f.resume(1)").value(), "2");
  try {
    sandbox.eval("fs = []; loop { f = Fiber.new { Fiber.yield }; f.resume; fs << f }");
    ADD_FAILURE() << "no failure";
  } catch (const Error& e) {
    EXPECT_EQ(to_string(e.code()), "memory_limit") << e.what();
  }
  try {
    sandbox.eval("def nest(n) = Fiber.new { nest(n + 1) }.resume\nnest(0)");
    ADD_FAILURE() << "no failure";
  } catch (const Error& e) {
    EXPECT_TRUE(e.code() == FailureCode::guest_error || e.code() == FailureCode::memory_limit ||
                e.code() == FailureCode::timeout)
        << to_string(e.code()) << ": " << e.what();
  }
  expect_failure(FailureCode::guest_error,
                 [&] { sandbox.eval("f = Fiber.new { }; f.resume; f.resume"); });
  expect_alive(sandbox);
}

TEST(RubyHostile, DeepRecursionIsAGuestError) {
  RubySandbox sandbox(hostile_options());
  auto caught =
      expect_failure(FailureCode::guest_error, [&] { sandbox.eval("def f(n) = f(n + 1)\nf(0)"); });
  EXPECT_TRUE(contains(caught.message, "SystemStackError")) << caught.message;
  expect_failure(FailureCode::unserializable_value,
                 [&] { sandbox.eval("a = []; 1000.times { a = [a] }; a"); });
  expect_alive(sandbox);
}

TEST(RubyHostile, DeeplyNestedInspectDoesNotTakeTheHostDown) {
  RubySandbox sandbox(hostile_options());
  try {
    sandbox.eval("a = []; 100_000.times { a = [a] }; a.inspect.size");
  } catch (const Error& e) {
    EXPECT_NE(to_string(e.code()), "unavailable") << e.what();
  }
  expect_alive(sandbox);
}

TEST(RubyHostile, E04_HostileMessageOnARaisedExceptionIsContained) {
  RubySandbox sandbox(hostile_options());
  auto caught = expect_failure(FailureCode::guest_error, [&] {
    sandbox.eval("class E < StandardError; def message; raise 'no'; end; end; raise E");
  });
  EXPECT_TRUE(contains(caught.message, "(E)")) << caught.message;
  expect_failure(FailureCode::timeout, [&] {
    sandbox.eval("class E2 < StandardError; def message; loop {}; end; end; raise E2");
  });
  expect_failure(FailureCode::guest_error, [&] { sandbox.eval("raise 'x' * 1_000_000"); });
  expect_alive(sandbox);
}

TEST(RubyHostile, TamperingWithOutputAndServicesStaysInsideTheRun) {
  RubySandbox sandbox(hostile_options());
  sandbox.bind("KV.get", [](std::string_view) { return std::string("1"); });
  expect_failure(FailureCode::guest_error, [&] { sandbox.eval("$stdout = nil; puts 1"); });
  EXPECT_EQ(sandbox.eval("def KV.get(*) = 99\nKV.get").value(), "99");
  EXPECT_EQ(sandbox.eval("KV.get").value(), "1");
  EXPECT_EQ(sandbox.eval("__corral_write__(0, 'direct'); :ok").stdout_text(), "direct");
  expect_failure(FailureCode::guest_error,
                 [&] { sandbox.eval("Corral.send(:remove_const, :NoServiceError); KV.missing"); });
  expect_alive(sandbox);
}

}  // namespace
}  // namespace corral::sandbox::testing

namespace corral::sandbox::testing {
namespace {

// An embedder that forks (without exec) after using a Ruby sandbox can use
// Ruby sandboxes in the child: the child has no spawner thread of its own
// until it makes one.
TEST(RubyHelper, AForkedEmbedderGetsItsOwnForker) {
  RubySandbox before(ruby_options());
  ASSERT_EQ(before.eval("1").value(), "1");
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::alarm(20);  // a hang fails the test instead of blocking it
    RubySandbox child(ruby_options());
    ::_exit(child.eval("2 + 3").value() == "5" ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(before.eval("3").value(), "3");
}

}  // namespace
}  // namespace corral::sandbox::testing
