// src/pool/worker_process.hpp: starting a `corral worker` process.
//
// What a worker inherits is part of the boundary: exactly fds 0 and 1
// (/dev/null), 2 (a pipe the pool reads), 3 (its socket); no environment
// but the sanitizer settings; no blocked signals, all at their defaults.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "corral/pool.hpp"

namespace corral::pool {

// A started worker: its process and the descriptors the pool keeps (the
// caller owns and closes them).
struct LaunchedWorker {
  pid_t pid = 0;
  int pidfd = -1;      // its exit, and signals that cannot reach a reused pid
  int socket = -1;     // the pool's end of the IPC socket (the worker's fd 3)
  int stderr_fd = -1;  // the read end of the worker's fd 2
};

// This process's own executable with "worker": Options::worker_command's default.
std::vector<std::string> default_worker_command();

// options.worker_command and the flags that carry the options a worker reads.
std::vector<std::string> worker_arguments(const Options& options);

// Starts one worker. Throws std::runtime_error naming the call that failed
// ("posix_spawn /usr/bin/corral: No such file or directory"); nothing is
// left open or running then.
LaunchedWorker launch_worker(const Options& options);

}  // namespace corral::pool
