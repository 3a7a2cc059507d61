// src/sandbox/guest_spawn.hpp: posix_spawn of a process that runs guests
// (a pooled worker, corral-ruby-helper) with a closed inheritance: exactly
// the descriptors asked for, no blocked signal, every signal at its default.
#pragma once

#include <sys/types.h>

#include <initializer_list>

namespace corral::sandbox {

// One descriptor of the child: `target` there is `source` here, or
// /dev/null (kDevNullRead/kDevNullWrite). A descriptor below the highest
// target that no ChildFd names is closed; every one above it is closed too.
// The dup2s run in target order, so a source must not be a smaller target,
// nor its own target (dup2 onto itself would keep FD_CLOEXEC).
struct ChildFd {
  int target;
  int source;
};
inline constexpr int kDevNullRead = -1;
inline constexpr int kDevNullWrite = -2;

// Starts `path` with `argv` and `envp` (both null-terminated). Returns 0 and
// sets `pid`, or the error posix_spawn gave. Nothing of the caller's reaches
// the child, not even for the instant before it closes fds itself: an
// embedder's descriptors without CLOEXEC (Asio opens its sockets so) would
// otherwise be inherited; a signal the caller blocks or ignores (a daemon's
// SIGPIPE, a thread's mask) is not the child's.
int spawn_guest_process(pid_t& pid, const char* path, char* const argv[], char* const envp[],
                        std::initializer_list<ChildFd> fds);

}  // namespace corral::sandbox
