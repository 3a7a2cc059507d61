// src/pool/worker.hpp: the `corral worker` process's main loop.
//
// A worker reads "run" frames from its IPC socket, runs each in a sandbox
// (one runner thread and one isolate per concurrent run), forwards the
// guest's tool calls to the pool as "call" frames and hands the answers back,
// and answers each run with one "done" frame. See frames.hpp for the
// messages and lockdown.hpp for what it does before the first run.
#pragma once

#include <cstddef>
#include <cstdint>

namespace corral::pool {

struct WorkerSettings {
  int ipc_fd = 3;
  bool harden = true;
  std::size_t max_frame = std::size_t{64} << 20;
  // RLIMIT_DATA (soft and hard): the kernel's bound on the worker's private
  // writable memory. 0 leaves it as inherited.
  std::uint64_t memory_ceiling = 0;
};

// The exit status of a worker whose engine ran out of memory (V8's heap, or
// an allocation refused at memory_ceiling): the pool ends its runs as
// memory_limit, not as a crash.
inline constexpr int kOutOfMemoryExit = 86;

// Runs until the pool closes the socket; returns the process exit code.
int run_worker(const WorkerSettings& settings);

}  // namespace corral::pool
