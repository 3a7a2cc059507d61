// src/process/orphans.cc: the orphan rule of orphans.hpp over /proc.
#include "process/orphans.hpp"

#include <dirent.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace corral::process {

namespace {

std::vector<std::string> directory_names(const char* path) {
  std::vector<std::string> names;
  DIR* dir = ::opendir(path);
  if (!dir) return names;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') names.emplace_back(entry->d_name);
  }
  ::closedir(dir);
  return names;
}

std::optional<pid_t> parse_pid(std::string_view text) {
  pid_t pid = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), pid);
  if (ec != std::errc() || pid <= 0) return std::nullopt;
  return pid;
}

// The pids this process holds a pidfd for: the children someone waits for.
std::set<pid_t> pidfd_targets() {
  std::set<pid_t> pids;
  for (const std::string& fd : directory_names("/proc/self/fd")) {
    char link[64];
    const std::string path = "/proc/self/fd/" + fd;
    const ssize_t n = ::readlink(path.c_str(), link, sizeof link - 1);
    if (n <= 0 || std::string_view(link, static_cast<std::size_t>(n)) != "anon_inode:[pidfd]")
      continue;
    std::ifstream info("/proc/self/fdinfo/" + fd);
    std::string line;
    while (std::getline(info, line)) {
      if (line.rfind("Pid:", 0) != 0) continue;
      const std::size_t digits = line.find_first_not_of(" \t", 4);
      if (digits == std::string::npos) break;
      if (auto pid = parse_pid(std::string_view(line).substr(digits))) pids.insert(*pid);
      break;
    }
  }
  return pids;
}

}  // namespace

std::vector<pid_t> children_of(pid_t pid) {
  const std::string root = pid == 0 ? "/proc/self" : "/proc/" + std::to_string(pid);
  std::vector<pid_t> all;
  for (const std::string& task : directory_names((root + "/task").c_str())) {
    std::ifstream in(root + "/task/" + task + "/children");
    pid_t child;
    while (in >> child) all.push_back(child);
  }
  return all;
}

std::string process_state(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  // "pid (comm) S ...": comm may hold spaces and parentheses; the state
  // follows the last ')'.
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return {};
  return stat.substr(close + 2, 1);
}

std::size_t reap_orphans(std::set<pid_t>& suspects) {
  std::vector<pid_t> zombies;
  for (pid_t pid : children_of()) {
    if (process_state(pid) == "Z") zombies.push_back(pid);
  }
  std::set<pid_t> next;
  std::size_t reaped = 0;
  if (!zombies.empty()) {
    const std::set<pid_t> owned = pidfd_targets();  // only read when there is a zombie
    for (pid_t pid : zombies) {
      if (owned.count(pid)) continue;
      if (!suspects.count(pid)) {
        next.insert(pid);
        continue;
      }
      int status = 0;
      pid_t got;
      do {
        got = ::waitpid(pid, &status, WNOHANG);
      } while (got < 0 && errno == EINTR);
      if (got == pid) ++reaped;
    }
  }
  suspects = std::move(next);
  return reaped;
}

OrphanReaper::OrphanReaper(std::chrono::milliseconds interval) {
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  thread_ = std::thread([this, interval] { loop(interval); });
}

OrphanReaper::~OrphanReaper() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::uint64_t OrphanReaper::reaped() const {
  std::lock_guard lock(mutex_);
  return reaped_;
}

void OrphanReaper::loop(std::chrono::milliseconds interval) {
  std::set<pid_t> suspects;
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, interval, [this] { return stopping_; })) {
    lock.unlock();
    const std::size_t reaped = reap_orphans(suspects);
    lock.lock();
    reaped_ += reaped;
  }
}

}  // namespace corral::process
