// src/process/cgroup.cc: cgroup v2 discovery and leaf operations.
#include "process/cgroup.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <sstream>
#include <system_error>

namespace corral::process {

namespace {

std::atomic<unsigned> next_parent{0};
std::atomic<unsigned> next_leaf{0};

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

}  // namespace

std::optional<std::string> own_cgroup2_directory() {
  std::istringstream mounts(read_small_file("/proc/mounts"));
  std::string line;
  std::string mount_point;
  while (std::getline(mounts, line)) {
    std::istringstream fields(line);
    std::string device, point, type;
    fields >> device >> point >> type;
    if (type == "cgroup2") {
      mount_point = point;
      break;
    }
  }
  if (mount_point.empty()) return std::nullopt;
  std::istringstream groups(read_small_file("/proc/self/cgroup"));
  while (std::getline(groups, line)) {
    if (line.rfind("0::", 0) == 0) {
      std::string relative = line.substr(3);
      if (relative == "/") relative.clear();
      return mount_point + relative;
    }
  }
  return std::nullopt;
}

std::optional<CgroupParent> CgroupParent::create(const std::string& base) {
  std::string root = base;
  if (root.empty()) {
    auto own = own_cgroup2_directory();
    if (!own) return std::nullopt;
    root = *own;
  }
  std::string path = root + "/corral-" + std::to_string(::getpid()) + "-" +
                     std::to_string(next_parent.fetch_add(1));
  if (::mkdir(path.c_str(), 0755) != 0) return std::nullopt;
  CgroupParent parent(path);
  if (!exists(path + "/cgroup.kill") || !exists(path + "/cgroup.events") ||
      ::access((path + "/cgroup.procs").c_str(), W_OK) != 0) {
    return std::nullopt;  // the destructor removes the directory
  }
  // Enable what our parent offers; a failure leaves that controller off.
  std::istringstream offered(read_small_file(path + "/cgroup.controllers"));
  std::string controller;
  while (offered >> controller) {
    bool* flag = controller == "pids"     ? &parent.controllers_.pids
                 : controller == "memory" ? &parent.controllers_.memory
                 : controller == "cpu"    ? &parent.controllers_.cpu
                                          : nullptr;
    if (flag != nullptr)
      *flag = write_file(path + "/cgroup.subtree_control", "+" + controller) == 0;
  }
  return parent;
}

CgroupParent::~CgroupParent() {
  if (path_.empty()) return;
  ::rmdir(path_.c_str());
}

CgroupLeaf CgroupLeaf::create(const std::string& parent) {
  std::string path = parent + "/run-" + std::to_string(next_leaf.fetch_add(1));
  if (::mkdir(path.c_str(), 0755) != 0) {
    throw std::system_error(errno, std::generic_category(), "mkdir " + path);
  }
  UniqueFd procs(::open((path + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC));
  UniqueFd events(::open((path + "/cgroup.events").c_str(), O_RDONLY | O_CLOEXEC));
  if (!procs || !events) {
    int error = errno;
    ::rmdir(path.c_str());
    throw std::system_error(error, std::generic_category(), "open " + path);
  }
  return CgroupLeaf(std::move(path), std::move(procs), std::move(events));
}

CgroupLeaf::~CgroupLeaf() {
  if (!path_.empty() && !removed_) ::rmdir(path_.c_str());
}

bool CgroupLeaf::reopen_procs() {
  procs_ = UniqueFd(::open((path_ + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC));
  return static_cast<bool>(procs_);
}

std::uint64_t CgroupLeaf::oom_kills() const {
  std::string text = read_small_file(path_ + "/memory.events");
  auto at = text.find("oom_kill ");
  if (at == std::string::npos) return 0;
  at += 9;
  std::uint64_t count = 0;
  std::from_chars(text.data() + at, text.data() + text.size(), count);
  return count;
}

bool CgroupLeaf::empty() const {
  char buffer[256];
  ssize_t n = ::pread(events_.get(), buffer, sizeof buffer - 1, 0);
  if (n <= 0) return false;  // unreadable is never evidence of emptiness
  std::string_view text(buffer, static_cast<size_t>(n));
  auto at = text.find("populated ");
  if (at == std::string_view::npos) return false;
  return text.substr(at + 10, 1) == "0";
}

int CgroupLeaf::kill_all() const { return write_file(path_ + "/cgroup.kill", "1"); }

void CgroupLeaf::signal_all(int signal) const {
  std::istringstream pids(read_small_file(path_ + "/cgroup.procs"));
  std::string line;
  while (std::getline(pids, line)) {
    int pid = 0;
    auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), pid);
    if (ec == std::errc() && pid > 0) ::kill(pid, signal);
  }
}

std::optional<double> CgroupLeaf::cpu_seconds() const {
  std::string text = read_small_file(path_ + "/cpu.stat");
  auto at = text.find("usage_usec ");
  if (at == std::string::npos) return std::nullopt;
  at += 11;
  std::uint64_t usec = 0;
  auto [end, ec] = std::from_chars(text.data() + at, text.data() + text.size(), usec);
  if (ec != std::errc()) return std::nullopt;
  return static_cast<double>(usec) / 1e6;
}

bool CgroupLeaf::remove() {
  if (removed_) return true;
  removed_ = ::rmdir(path_.c_str()) == 0;
  return removed_;
}

CgroupLeaf CgroupLeafPool::take() {
  for (;;) {
    std::optional<CgroupLeaf> leaf;
    {
      std::lock_guard lock(mutex_);
      if (free_.empty()) break;
      leaf.emplace(std::move(free_.back()));
      free_.pop_back();
    }
    // empty() re-reads cgroup.events, which also re-arms its POLLPRI.
    if (leaf->empty() && read_small_file(leaf->path() + "/cgroup.procs").empty() &&
        leaf->reopen_procs()) {
      return std::move(*leaf);
    }
    // Not reusable: its destructor removes it if it can.
  }
  return CgroupLeaf::create(parent_);
}

void CgroupLeafPool::give(CgroupLeaf&& leaf) {
  if (!leaf.empty()) return;  // the caller parks a leaf that is not empty
  leaf.close_procs();
  std::lock_guard lock(mutex_);
  if (free_.size() < keep_) {
    free_.push_back(std::move(leaf));
  } else {
    leaf.remove();
  }
}

std::size_t CgroupLeafPool::free_leaves() const {
  std::lock_guard lock(mutex_);
  return free_.size();
}

}  // namespace corral::process
