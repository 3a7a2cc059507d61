// src/pool/resident_memory.hpp: a worker's resident memory, read from outside.
//
// The resident bytes of a worker process and its children (a worker in a
// pid namespace runs as the child of a small reaper). Read after every run,
// so the statm files stay open and each reading is one pread per process
// instead of an open, reads and a close.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <vector>

namespace corral::pool {

class ResidentMemory {
 public:
  ResidentMemory() = default;
  ResidentMemory(const ResidentMemory&) = delete;
  ResidentMemory& operator=(const ResidentMemory&) = delete;
  ~ResidentMemory() { close(); }

  // Resident bytes of the worker and its reaper.
  std::uint64_t bytes(pid_t pid) { return sum(pid, false); }
  // The same without file-backed pages (the binary, ICU's data), which the
  // guest does not make and the kernel can drop: what the guest can grow.
  std::uint64_t private_bytes(pid_t pid) { return sum(pid, true); }

  // True if the worker or its reaper is stopped (SIGSTOP, a debugger) or
  // gone: such a worker would hold a run without running it.
  bool stopped(pid_t pid);

  void close();

 private:
  void open(pid_t pid);
  std::uint64_t sum(pid_t pid, bool private_only);

  pid_t pid_ = 0;
  std::vector<int> fds_;       // /proc/P/statm of the worker and its children
  std::vector<int> stat_fds_;  // /proc/P/stat of the same
};

}  // namespace corral::pool
