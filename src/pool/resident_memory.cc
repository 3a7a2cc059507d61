// src/pool/resident_memory.cc: /proc/P/statm and /proc/P/stat, kept open.
#include "pool/resident_memory.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

namespace corral::pool {

void ResidentMemory::close() {
  for (int fd : fds_) ::close(fd);
  for (int fd : stat_fds_) ::close(fd);
  fds_.clear();
  stat_fds_.clear();
  pid_ = 0;
}

bool ResidentMemory::stopped(pid_t pid) {
  if (pid != pid_) open(pid);
  for (int fd : stat_fds_) {
    char text[512];
    const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
    if (n <= 0) return true;
    text[n] = '\0';
    // "pid (comm) S ...": the state follows the last ')'.
    const char* close = std::strrchr(text, ')');
    if (!close || close[1] != ' ') continue;
    const char state = close[2];
    if (state == 'T' || state == 't' || state == 'Z' || state == 'X') return true;
  }
  return false;
}

void ResidentMemory::open(pid_t pid) {
  close();
  pid_ = pid;
  auto add = [&](pid_t p) {
    const std::string dir = "/proc/" + std::to_string(p);
    const int fd = ::open((dir + "/statm").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) fds_.push_back(fd);
    const int stat = ::open((dir + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
    if (stat >= 0) stat_fds_.push_back(stat);
  };
  add(pid);
  std::ifstream children("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) +
                         "/children");
  for (pid_t child; children >> child;) add(child);
}

std::uint64_t ResidentMemory::sum(pid_t pid, bool private_only) {
  if (pid != pid_) open(pid);
  static const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  std::uint64_t total = 0;
  for (int fd : fds_) {
    char text[128];
    const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
    if (n <= 0) continue;
    text[n] = '\0';
    unsigned long long size = 0, resident = 0, shared = 0;
    if (std::sscanf(text, "%llu %llu %llu", &size, &resident, &shared) == 3) {
      total += (private_only ? resident - std::min(resident, shared) : resident) * page;
    }
  }
  return total;
}

}  // namespace corral::pool
