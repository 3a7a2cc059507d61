// src/pool/worker_exit.cc: reading a worker's wait status.
#include "pool/worker_exit.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <cstring>

namespace corral::pool {

int death_signal(int status) {
  if (WIFSIGNALED(status)) return WTERMSIG(status);
  if (WIFEXITED(status) && WEXITSTATUS(status) > 128 && WEXITSTATUS(status) < 128 + 65) {
    return WEXITSTATUS(status) - 128;
  }
  return 0;
}

bool is_fault(int sig) {
  return sig == SIGSEGV || sig == SIGABRT || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
         sig == SIGTRAP || sig == SIGSYS;
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "was killed by signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")";
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended";
}

}  // namespace corral::pool
