// tests/process/spawned.hpp: a child process whose stdout a test reads.
// POSIX only (no corral headers), so tests of the bare binary use it too.
#pragma once

#include <spawn.h>
#include <sys/types.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace corral::process::testing {

// A child started with its stdout on a pipe the test reads from `out`.
struct Piped {
  pid_t pid = 0;
  int out = -1;
};
inline Piped spawn_piped(std::vector<std::string> args) {
  Piped child;
  int out[2];
  if (::pipe(out) != 0) return child;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  if (posix_spawn(&child.pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) child.pid = 0;
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  child.out = out[0];
  return child;
}

// Everything a child writes to `fd` until it closes; closes `fd`.
inline std::string read_all(int fd) {
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, n);
  ::close(fd);
  return text;
}

}  // namespace corral::process::testing
