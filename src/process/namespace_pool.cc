// src/process/namespace_pool.cc: namespaces kept across confined starts.
#include "process/namespace_pool.hpp"

#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "process/child_code.hpp"
#include "process/spawn.hpp"

namespace corral::process {

class NetworkNamespacePool : public std::enable_shared_from_this<NetworkNamespacePool> {
 public:
  explicit NetworkNamespacePool(int owner) : owner_(owner) {}
  NetworkLease lease();
  void put(UniqueFd fd);
  std::size_t idle() {
    std::lock_guard lock(mutex_);
    return idle_.size();
  }

 private:
  const int owner_;
  std::mutex mutex_;
  std::vector<UniqueFd> idle_;
};

void NetworkLease::give_back() {
  if (pool_ && fd_) pool_->put(std::move(fd_));
  pool_.reset();
}

namespace {

// A short-lived child (a real fork: it waits while the parent writes its id
// maps) that holds the namespaces the parent then opens under
// /proc/<pid>/ns/. Raw system calls only.
struct HolderPlan {
  int enter_user = -1;  // setns into this user namespace first
  bool new_network = false;
  int report_fd = -1;      // the child writes its errno (0: ready) here
  int wait_fd = -1;        // EOF: the parent has opened what it needs
  int wait_write_fd = -1;  // the parent's end, closed by the child
  struct ifreq loopback {};
};

[[noreturn]] CORRAL_CHILD_CODE void holder_main(const HolderPlan& plan) {
  ::syscall(SYS_close, plan.wait_write_fd);
  ::syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  int error = 0;
  if (plan.enter_user >= 0 && ::syscall(SYS_setns, plan.enter_user, CLONE_NEWUSER) < 0) {
    error = errno;
  }
  if (error == 0 && plan.new_network) {
    long sock = -1;
    if (::syscall(SYS_unshare, CLONE_NEWNET) < 0 ||
        (sock = ::syscall(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0 ||
        ::syscall(SYS_ioctl, sock, SIOCSIFFLAGS, &plan.loopback) < 0) {
      error = errno;
    }
    if (sock >= 0) ::syscall(SYS_close, sock);
  }
  ::syscall(SYS_write, plan.report_fd, &error, sizeof error);
  char byte;
  long got;
  do {
    got = ::syscall(SYS_read, plan.wait_fd, &byte, 1);
  } while (got < 0 && errno == EINTR);
  ::syscall(SYS_exit_group, 0);
  __builtin_unreachable();
}

void write_map(const std::string& path, const std::string& text) {
  if (int error = write_file(path, text); error != 0) {
    throw SpawnError(errno_message("write " + path, error));
  }
}

// Starts a holder (in a new user namespace when `new_user`, which then maps
// uid and gid), and opens its namespace `name` ("user", "net").
UniqueFd hold_namespace(bool new_user, HolderPlan plan, unsigned uid, unsigned gid,
                        const char* name) {
  UniqueFd report_read, report_write, wait_read, wait_write;
  make_pipe(report_read, report_write);
  make_pipe(wait_read, wait_write);
  plan.report_fd = report_write.get();
  plan.wait_fd = wait_read.get();
  plan.wait_write_fd = wait_write.get();
  std::strncpy(plan.loopback.ifr_name, "lo", IFNAMSIZ - 1);
  plan.loopback.ifr_flags = IFF_UP | IFF_RUNNING;

  long pid;
  int clone_error;
  {
    BlockSignals blocked;
    pid = ::syscall(SYS_clone, SIGCHLD | (new_user ? CLONE_NEWUSER : 0), 0, 0, 0, 0);
    if (pid == 0) holder_main(plan);
    clone_error = errno;
  }
  if (pid < 0) throw SpawnError(errno_message("clone a namespace holder", clone_error));
  report_write.reset();
  wait_read.reset();

  auto finish = [&] {
    wait_write.reset();
    int status = 0;
    while (::waitpid(static_cast<pid_t>(pid), &status, 0) < 0 && errno == EINTR) {
    }
  };
  try {
    int error = -1;
    ssize_t n;
    do {
      n = ::read(report_read.get(), &error, sizeof error);
    } while (n < 0 && errno == EINTR);
    if (n != static_cast<ssize_t>(sizeof error)) error = EIO;
    if (error != 0)
      throw SpawnError(errno_message(std::string("set up a shared ") + name + " namespace", error));
    const std::string proc = "/proc/" + std::to_string(pid) + "/";
    if (new_user) {
      write_map(proc + "uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1\n");
      if (::geteuid() != 0) write_map(proc + "setgroups", "deny");
      write_map(proc + "gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1\n");
    }
    UniqueFd fd(::open((proc + "ns/" + name).c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) throw SpawnError(errno_message(proc + "ns/" + name, errno));
    finish();
    return fd;
  } catch (...) {
    ::kill(static_cast<pid_t>(pid), SIGKILL);
    finish();
    throw;
  }
}

// Everything kept, for the life of the process. A forked child (that did not
// exec) must not share its parent's namespaces between their runs: it
// starts over with none.
struct Registry {
  std::mutex mutex;
  pid_t owner_pid = ::getpid();
  std::map<std::pair<unsigned, unsigned>, UniqueFd> users;
  std::map<int, std::shared_ptr<NetworkNamespacePool>> networks;

  void forget_if_forked() {
    if (owner_pid == ::getpid()) return;
    owner_pid = ::getpid();
    users.clear();
    networks.clear();
  }
};

Registry& registry() {
  static Registry* kept = new Registry;  // never destroyed: runs may end after exit starts
  return *kept;
}

}  // namespace

NetworkLease NetworkNamespacePool::lease() {
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      UniqueFd fd = std::move(idle_.back());
      idle_.pop_back();
      return NetworkLease(shared_from_this(), std::move(fd));
    }
  }
  HolderPlan plan;
  plan.enter_user = owner_;
  plan.new_network = true;
  return NetworkLease(shared_from_this(), hold_namespace(false, plan, 0, 0, "net"));
}

void NetworkNamespacePool::put(UniqueFd fd) {
  std::lock_guard lock(mutex_);
  if (idle_.size() < kMaxIdleNetworkNamespaces) idle_.push_back(std::move(fd));
}

int shared_user_namespace(unsigned uid, unsigned gid) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.forget_if_forked();
  auto& fd = r.users[{uid, gid}];
  if (!fd) fd = hold_namespace(true, HolderPlan{}, uid, gid, "user");
  return fd.get();
}

NetworkLease lease_network_namespace(int owner) {
  std::shared_ptr<NetworkNamespacePool> pool;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    r.forget_if_forked();
    auto& slot = r.networks[owner];
    if (!slot) slot = std::make_shared<NetworkNamespacePool>(owner);
    pool = slot;
  }
  return pool->lease();
}

std::size_t idle_network_namespaces() {
  Registry& r = registry();
  std::vector<std::shared_ptr<NetworkNamespacePool>> pools;
  {
    std::lock_guard lock(r.mutex);
    for (auto& [owner, pool] : r.networks) pools.push_back(pool);
  }
  std::size_t total = 0;
  for (auto& pool : pools) total += pool->idle();
  return total;
}

}  // namespace corral::process
