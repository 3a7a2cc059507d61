#include "sandbox/ruby/helper.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include "core/companion.hpp"
#include "sandbox/guest_spawn.hpp"

// The build tree and the install prefix this library was built for
// (src/sandbox/ruby/CMakeLists.txt).
#ifndef CORRAL_RUBY_HELPER_BUILD_DIR
#define CORRAL_RUBY_HELPER_BUILD_DIR ""
#endif
#ifndef CORRAL_RUBY_HELPER_BUILD_PATH
#define CORRAL_RUBY_HELPER_BUILD_PATH ""
#endif
#ifndef CORRAL_RUBY_HELPER_INSTALL_PATH
#define CORRAL_RUBY_HELPER_INSTALL_PATH ""
#endif

namespace corral::sandbox::ruby {
namespace {

constexpr char kProgram[] = "corral-ruby-helper";

// The environment a helper gets: nothing of the host's but the time zone
// (permissive guests see local time) and the sanitizers' options.
std::vector<std::string> helper_environment() {
  std::vector<std::string> env;
  for (const char* name : {"TZ", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"}) {
    if (const char* value = std::getenv(name)) env.push_back(std::string(name) + "=" + value);
  }
  return env;
}

// The thread every helper is spawned from. PR_SET_PDEATHSIG fires when the
// thread that created the child ends, so it must be a thread that lives as
// long as the process. It blocks every signal; the helper gets them all at
// their defaults and none blocked.
class Spawner {
 public:
  static Spawner& instance() {
    // Never destroyed: its thread never ends. A process forked (without
    // exec) from this one has the object but not the thread, so it makes
    // its own.
    static std::mutex mutex;
    static Spawner* spawner = nullptr;
    static pid_t owner = 0;
    std::lock_guard lock(mutex);
    if (!spawner || owner != ::getpid()) {
      spawner = new Spawner();
      owner = ::getpid();
    }
    return *spawner;
  }

  pid_t spawn(const std::string& path, int socket_fd, int counters_fd, int& error) {
    if (!started_) {
      error = start_error_;
      return -1;
    }
    std::lock_guard serial(request_mutex_);
    Job job{&path, socket_fd, counters_fd};
    std::unique_lock lock(mutex_);
    job_ = &job;
    wake_.notify_all();
    done_.wait(lock, [&] { return job.done; });
    error = job.error;
    return job.pid;
  }

 private:
  struct Job {
    const std::string* path;
    int socket_fd;
    int counters_fd;
    pid_t pid = -1;
    int error = 0;
    bool done = false;
  };

  Spawner() {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t thread;
    const int rc = pthread_create(&thread, &attr, &Spawner::main, this);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    pthread_attr_destroy(&attr);
    started_ = rc == 0;
    start_error_ = rc;
  }

  static void* main(void* self) {
    static_cast<Spawner*>(self)->loop();
    return nullptr;
  }

  void loop() {
    pthread_setname_np(pthread_self(), "corral-spawner");
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return job_ != nullptr; });
      Job* job = job_;
      job_ = nullptr;
      lock.unlock();
      int error = 0;
      const pid_t pid = start(*job, error);
      lock.lock();
      job->pid = pid;
      job->error = error;
      job->done = true;
      done_.notify_all();
    }
  }

  // posix_spawn: the helper holds only its socket (3) and the counters (4).
  static pid_t start(const Job& job, int& error) {
    const std::string parent = std::to_string(::getpid());
    std::vector<std::string> env = helper_environment();
    std::vector<char*> envp;
    for (std::string& entry : env) envp.push_back(entry.data());
    envp.push_back(nullptr);
    char* argv[] = {const_cast<char*>(kProgram), const_cast<char*>(kHelperProtocol),
                    const_cast<char*>(parent.c_str()), nullptr};
    pid_t pid = -1;
    error = spawn_guest_process(pid, job.path->c_str(), argv, envp.data(),
                                {{3, job.socket_fd}, {4, job.counters_fd}});
    return error == 0 ? pid : -1;
  }

  bool started_ = false;
  int start_error_ = 0;
  std::mutex request_mutex_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  Job* job_ = nullptr;
};

// A descriptor at 5 or above: the spawn's dup2 onto 3 and 4 must not meet
// an fd that is already 3 or 4 (a same-number dup2 keeps O_CLOEXEC).
int above_four(int fd) {
  if (fd > 4) return fd;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 5);
  ::close(fd);
  return moved;
}

}  // namespace

std::string helper_path(std::string& error) {
  return core::find_companion({kProgram, "CORRAL_RUBY_HELPER", CORRAL_RUBY_HELPER_BUILD_DIR,
                               CORRAL_RUBY_HELPER_BUILD_PATH, CORRAL_RUBY_HELPER_INSTALL_PATH},
                              error);
}

std::unique_ptr<HelperProcess> HelperProcess::spawn(std::string& error) {
  const std::string path = helper_path(error);
  if (path.empty()) return nullptr;
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    error = std::string("socketpair: ") + std::strerror(errno);
    return nullptr;
  }
  sv[1] = above_four(sv[1]);
  const int memfd = above_four(::memfd_create("corral-ruby-counters", MFD_CLOEXEC));
  void* page = MAP_FAILED;
  if (memfd >= 0 && ::ftruncate(memfd, sizeof(Counters)) == 0) {
    page = ::mmap(nullptr, sizeof(Counters), PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
  }
  if (sv[1] < 0 || page == MAP_FAILED) {
    error = std::string("counters page: ") + std::strerror(errno);
    if (memfd >= 0) ::close(memfd);
    ::close(sv[0]);
    if (sv[1] >= 0) ::close(sv[1]);
    return nullptr;
  }
  auto* counters = new (page) Counters();
  int spawn_error = 0;
  const pid_t pid = Spawner::instance().spawn(path, sv[1], memfd, spawn_error);
  ::close(sv[1]);
  ::close(memfd);
  if (pid < 0) {
    error = "posix_spawn " + path + ": " + std::strerror(spawn_error);
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

double HelperProcess::kill_and_reap(int* signal, int* exit_status) {
  if (!reaped_) ::kill(pid_, SIGKILL);
  return reap(signal, exit_status);
}

double HelperProcess::reap(int* signal, int* exit_status) {
  if (signal) *signal = 0;
  if (exit_status) *exit_status = -1;
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
  if (exit_status && WIFEXITED(status)) *exit_status = WEXITSTATUS(status);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

}  // namespace corral::sandbox::ruby
