#include "sandbox/ruby/helper.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <new>

#include "sandbox/ruby/guest.hpp"

namespace corral::sandbox::ruby {
namespace {

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// The child's end of a run: output and tool calls become frames.
class ChildHost : public GuestHost {
 public:
  explicit ChildHost(int fd) : fd_(fd) {}

  void write(int channel, std::string_view bytes) override {
    Writer frame(Frame::out);
    frame.u8(static_cast<std::uint8_t>(channel)).str(bytes);
    if (!write_all(fd_, frame.finish())) ::_exit(0);
  }

  Answer call_tool(std::uint32_t index, std::string args_json, std::string& out,
                   std::uint8_t&) override {
    Writer frame(Frame::call);
    frame.u32(index).str(args_json);
    if (!write_all(fd_, frame.finish())) ::_exit(0);
    std::string body;
    if (!read_frame(fd_, body)) ::_exit(0);
    Reader reader(body);
    if (reader.u8() != static_cast<std::uint8_t>(Frame::answer)) ::_exit(3);
    const bool ok = reader.u8() != 0;
    out = std::string(reader.str());
    if (!reader.ok()) ::_exit(3);
    return ok ? Answer::ok : Answer::error;
  }

 private:
  int fd_;
};

// The thread every helper is forked from. PR_SET_PDEATHSIG fires when the
// thread that forked the child ends, so it must be a thread that lives as
// long as the process; it also holds no lock of ours while it forks and
// blocks every signal.
class Forker {
 public:
  static Forker& instance() {
    // Never destroyed: its thread never ends. A process forked (without
    // exec) from this one has the object but not the thread, so it makes
    // its own.
    static std::mutex mutex;
    static Forker* forker = nullptr;
    static pid_t owner = 0;
    std::lock_guard lock(mutex);
    if (!forker || owner != ::getpid()) {
      forker = new Forker();
      owner = ::getpid();
    }
    return *forker;
  }

  pid_t fork_helper(int child_fd, Counters* counters, int& error) {
    if (!started_) {
      error = start_error_;
      return -1;
    }
    std::lock_guard serial(request_mutex_);
    Job job{child_fd, counters, ::getpid()};
    std::unique_lock lock(mutex_);
    job_ = &job;
    wake_.notify_all();
    done_.wait(lock, [&] { return job.done; });
    error = job.error;
    return job.pid;
  }

 private:
  struct Job {
    int child_fd;
    Counters* counters;
    pid_t parent;
    pid_t pid = -1;
    int error = 0;
    bool done = false;
  };

  Forker() {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    // The child runs mruby on this thread's stack.
    pthread_attr_setstacksize(&attr, std::size_t{16} << 20);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t thread;
    const int rc = pthread_create(&thread, &attr, &Forker::main, this);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    pthread_attr_destroy(&attr);
    started_ = rc == 0;
    start_error_ = rc;
  }

  static void* main(void* self) {
    static_cast<Forker*>(self)->loop();
    return nullptr;
  }

  void loop() {
    pthread_setname_np(pthread_self(), "corral-forker");
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return job_ != nullptr; });
      Job* job = job_;
      job_ = nullptr;
      const int child_fd = job->child_fd;
      Counters* counters = job->counters;
      const pid_t parent = job->parent;
      lock.unlock();
      const pid_t pid = ::fork();
      if (pid == 0) child_entry(child_fd, counters, parent);
      const int error = pid < 0 ? errno : 0;
      lock.lock();
      job->pid = pid;
      job->error = error;
      job->done = true;
      done_.notify_all();
    }
  }

  [[noreturn]] static void child_entry(int child_fd, Counters* counters, pid_t parent) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(0);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ignore, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    // Only the socket survives, as fd 3; 0-2 read and write /dev/null.
    if (child_fd != 3 && ::dup2(child_fd, 3) < 0) ::_exit(4);
    const int null_fd = ::open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3; ++fd) {
      if (null_fd >= 0 && null_fd != fd) ::dup2(null_fd, fd);
    }
    if (::syscall(SYS_close_range, 4U, ~0U, 0U) != 0) {
      struct rlimit limit {};
      ::getrlimit(RLIMIT_NOFILE, &limit);
      const rlim_t top = limit.rlim_cur == RLIM_INFINITY ? 65536 : limit.rlim_cur;
      for (rlim_t fd = 4; fd < top && fd < 1048576; ++fd) ::close(static_cast<int>(fd));
    }
    ::prctl(PR_SET_NAME, "corral-ruby");
    helper_main(3, counters);
  }

  bool started_ = false;
  int start_error_ = 0;
  std::mutex request_mutex_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  Job* job_ = nullptr;
};

}  // namespace

std::unique_ptr<HelperProcess> HelperProcess::spawn(std::string& error) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    error = std::string("socketpair: ") + std::strerror(errno);
    return nullptr;
  }
  void* page =
      ::mmap(nullptr, sizeof(Counters), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) {
    error = std::string("mmap: ") + std::strerror(errno);
    ::close(sv[0]);
    ::close(sv[1]);
    return nullptr;
  }
  auto* counters = new (page) Counters();
  int fork_error = 0;
  const pid_t pid = Forker::instance().fork_helper(sv[1], counters, fork_error);
  ::close(sv[1]);
  if (pid < 0) {
    error = std::string("fork: ") + std::strerror(fork_error);
    ::close(sv[0]);
    ::munmap(page, sizeof(Counters));
    return nullptr;
  }
  return std::unique_ptr<HelperProcess>(new HelperProcess(pid, sv[0], counters));
}

HelperProcess::~HelperProcess() {
  if (!reaped_) kill_and_reap();
  ::close(fd_);
  ::munmap(static_cast<void*>(counters_), sizeof(Counters));
}

double HelperProcess::kill_and_reap(int* signal) {
  if (!reaped_) ::kill(pid_, SIGKILL);
  return reap(signal);
}

double HelperProcess::reap(int* signal) {
  if (signal) *signal = 0;
  if (reaped_) return 0;
  reaped_ = true;
  int status = 0;
  struct rusage usage {};
  pid_t got;
  do {
    got = ::wait4(pid_, &status, 0, &usage);
  } while (got < 0 && errno == EINTR);
  if (got != pid_) return 0;  // reaped by someone else (SIGCHLD ignored)
  if (signal && WIFSIGNALED(status)) *signal = WTERMSIG(status);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

void helper_main(int fd, Counters* counters) {
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
      if (!reader.ok()) ::_exit(3);
      guest = new Guest(std::move(setup), host, *counters);
      guest->prepare();
    } else if (type == Frame::run && guest) {
      GuestRequest request;
      request.kind = static_cast<RunRequest::Kind>(reader.u8());
      request.code = std::string(reader.str());
      request.entrypoint = std::string(reader.str());
      request.args_json = std::string(reader.str());
      if (!reader.ok()) ::_exit(3);
      const double cpu_start = process_cpu_seconds();
      counters->cpu_ns_at_start.store(static_cast<std::uint64_t>(cpu_start * 1e9));
      GuestResult result = guest->run(request);
      Writer done(Frame::done);
      done.u8(result.code)
          .str(result.message)
          .str(result.value)
          .f64(process_cpu_seconds() - cpu_start)
          .u8(result.discard ? 1 : 0);
      if (!write_all(fd, done.finish())) ::_exit(0);
      if (result.discard) ::_exit(0);
      guest->prepare();
    } else {
      ::_exit(3);
    }
  }
  ::_exit(0);
}

}  // namespace corral::sandbox::ruby
