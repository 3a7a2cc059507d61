// src/sandbox/ruby/helper_main.cc: corral-ruby-helper, the program a Ruby
// Sandbox runs its guests in (helper.hpp says how it is found and started).
//
//   corral-ruby-helper PROTOCOL PARENT_PID
//
// Started by posix_spawn with fd 3 its socket to the host and fd 4 a memfd
// holding the run counters (wire.hpp's Counters); nothing else is open. It
// maps the counters, closes fd 4, loads the time zone, then sets
// no_new_privs and installs the seccomp allow-list pooled workers run under
// (src/sandbox/seccomp_policy.cc) before it says hello and reads its first
// frame: no guest code runs in it without the filter. It leaves with _exit.
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "sandbox/ruby/guest.hpp"
#include "sandbox/ruby/helper.hpp"
#include "sandbox/ruby/wire.hpp"
#include "sandbox/seccomp_policy.hpp"

namespace corral::sandbox::ruby {
namespace {

constexpr int kSocketFd = 3;
constexpr int kCountersFd = 4;
// mruby recurses on the C stack when C methods call back into Ruby
// (inspect, ==, each with a block); its own depth checks must trip before
// the stack ends. The thread's stack is reserved, not committed.
constexpr std::size_t kStackBytes = std::size_t{64} << 20;

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// The helper's end of a run: output and tool calls become frames.
class ChildHost : public GuestHost {
 public:
  explicit ChildHost(int fd) : fd_(fd) {}

  // In pieces: a run without an output limit may print more than a frame
  // holds.
  void write(int channel, std::string_view bytes) override {
    do {
      const std::string_view piece = bytes.substr(0, kOutputPiece);
      bytes.remove_prefix(piece.size());
      Writer frame(Frame::out);
      frame.u8(static_cast<std::uint8_t>(channel)).str(piece);
      if (!send_frame(fd_, frame)) ::_exit(0);
    } while (!bytes.empty());
  }

  Answer call_tool(std::uint32_t index, std::string args_json, std::string& out,
                   std::uint8_t&) override {
    Writer frame(Frame::call);
    frame.u32(index).str(args_json);  // held under kFrameRoom (json_limit)
    if (!send_frame(fd_, frame)) ::_exit(0);
    std::string body;
    if (!read_frame(fd_, body)) ::_exit(0);
    Reader reader(body);
    if (reader.u8() != static_cast<std::uint8_t>(Frame::answer))
      ::_exit(HelperProcess::kExitProtocol);
    const bool ok = reader.u8() != 0;
    out = std::string(reader.str());
    if (!reader.ok()) ::_exit(HelperProcess::kExitProtocol);
    return ok ? Answer::ok : Answer::error;
  }

 private:
  int fd_;
};

[[noreturn]] void serve(int fd, Counters* counters) {
  ChildHost host(fd);
  Guest* guest = nullptr;  // never destroyed: the process ends with _exit
  std::string body;
  while (read_frame(fd, body)) {
    Reader reader(body);
    const auto type = static_cast<Frame>(reader.u8());
    if (type == Frame::setup && !guest) {
      GuestSetup setup;
      setup.profile = reader.u8() == 1 ? Profile::permissive : Profile::hermetic;
      setup.memory_limit = reader.u64();
      setup.stdout_limit = reader.u64();
      setup.stderr_limit = reader.u64();
      setup.max_tool_calls = reader.u64();
      for (std::uint32_t i = 0, n = reader.u32(); i < n && reader.ok(); ++i) {
        setup.tools.emplace_back(reader.str());
      }
      for (std::uint32_t i = 0, n = reader.u32(); i < n && reader.ok(); ++i) {
        Snippet snippet;
        snippet.name = std::string(reader.str());
        snippet.code = std::string(reader.str());
        setup.snippets.push_back(std::move(snippet));
      }
      if (!reader.ok()) ::_exit(HelperProcess::kExitProtocol);
      guest = new Guest(std::move(setup), host, *counters);
      guest->prepare();
    } else if (type == Frame::run && guest) {
      GuestRequest request;
      request.kind = static_cast<RunRequest::Kind>(reader.u8());
      request.code = std::string(reader.str());
      request.entrypoint = std::string(reader.str());
      request.args_json = std::string(reader.str());
      if (!reader.ok()) ::_exit(HelperProcess::kExitProtocol);
      const double cpu_start = process_cpu_seconds();
      counters->cpu_ns_at_start.store(static_cast<std::uint64_t>(cpu_start * 1e9));
      GuestResult result = guest->run(request);
      Writer done(Frame::done);
      done.u8(result.code)
          .str(result.message)
          .str(result.value)
          .f64(process_cpu_seconds() - cpu_start)
          .u8(result.discard ? 1 : 0);
      if (!send_frame(fd, done)) ::_exit(0);  // the value is held under kFrameRoom
      if (result.discard) ::_exit(0);
      guest->prepare();
    } else {
      ::_exit(HelperProcess::kExitProtocol);
    }
  }
  ::_exit(0);
}

struct Start {
  Counters* counters;
};

void* serve_thread(void* data) { serve(kSocketFd, static_cast<Start*>(data)->counters); }

}  // namespace
}  // namespace corral::sandbox::ruby

int main(int argc, char** argv) {
  using corral::sandbox::ruby::HelperProcess;
  namespace ruby = corral::sandbox::ruby;
  if (argc != 3 || std::strcmp(argv[1], ruby::kHelperProtocol) != 0) {
    ::_exit(HelperProcess::kExitMismatch);
  }
  // Die with the host's spawner thread (it lives as long as the host); if
  // the host was gone before this was armed, we were re-parented.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != static_cast<pid_t>(std::strtol(argv[2], nullptr, 10))) ::_exit(0);
  ::prctl(PR_SET_NAME, "corral-ruby");
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, nullptr);

  void* page = ::mmap(nullptr, sizeof(ruby::Counters), PROT_READ | PROT_WRITE, MAP_SHARED,
                      ruby::kCountersFd, 0);
  if (page == MAP_FAILED) ::_exit(HelperProcess::kExitProtocol);
  ::close(ruby::kCountersFd);
  // mruby's Time reads the time zone once; the filter refuses open().
  ::tzset();

  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, ruby::kStackBytes);
  // The filter (TSYNC) covers every thread; the serving thread is made
  // after it, so it never runs unfiltered.
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(HelperProcess::kExitNoLockdown);
  try {
    corral::sandbox::install_seccomp_policy();
  } catch (...) {
    ::_exit(HelperProcess::kExitNoLockdown);
  }
  ruby::Writer hello(ruby::Frame::hello);
  if (!ruby::send_frame(ruby::kSocketFd, hello)) ::_exit(0);
  ruby::Start start{static_cast<ruby::Counters*>(page)};
  pthread_t thread;
  if (pthread_create(&thread, &attr, &ruby::serve_thread, &start) != 0) {
    ::_exit(HelperProcess::kExitNoThread);
  }
  pthread_join(thread, nullptr);
  ::_exit(0);
}
