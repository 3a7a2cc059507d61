// src/pool/worker_exit.hpp: what a worker's wait status says about its end.
//
// A worker in a pid namespace runs under a small reaper that exits with
// 128 + the worker's signal, so a status is read through both layers here.
#pragma once

#include <string>

namespace corral::pool {

// The signal a worker died of, directly or through its reaper; 0 if none.
int death_signal(int status);

// Signals a process raises on itself for a fault in what it ran (the
// engine's CHECKs and aborts, a wild pointer, a syscall outside the
// policy), not ones sent from outside (SIGKILL, SIGTERM).
bool is_fault(int sig);

// "was killed by signal 9 (Killed)", "exited with status 3", "ended".
std::string describe_status(int status);

}  // namespace corral::pool
