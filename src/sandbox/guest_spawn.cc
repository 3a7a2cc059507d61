// posix_spawn with a closed inheritance (guest_spawn.hpp).
#include "sandbox/guest_spawn.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>

#include <algorithm>

namespace corral::sandbox {

namespace {

// The file actions and attributes of one spawn, destroyed on every path.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

}  // namespace

int spawn_guest_process(pid_t& pid, const char* path, char* const argv[], char* const envp[],
                        std::initializer_list<ChildFd> fds) {
  SpawnSetup setup;
  int highest = -1;
  for (const ChildFd& fd : fds) highest = std::max(highest, fd.target);
  for (int target = 0; target <= highest; ++target) {
    const ChildFd* wanted = nullptr;
    for (const ChildFd& fd : fds)
      if (fd.target == target) wanted = &fd;
    if (!wanted) {
      posix_spawn_file_actions_addclose(&setup.actions, target);
    } else if (wanted->source == kDevNullRead || wanted->source == kDevNullWrite) {
      posix_spawn_file_actions_addopen(&setup.actions, target, "/dev/null",
                                       wanted->source == kDevNullRead ? O_RDONLY : O_WRONLY, 0);
    } else {
      posix_spawn_file_actions_adddup2(&setup.actions, wanted->source, target);
    }
  }
  posix_spawn_file_actions_addclosefrom_np(&setup.actions, highest + 1);
  sigset_t none, every;
  sigemptyset(&none);
  sigfillset(&every);
  posix_spawnattr_setsigmask(&setup.attr, &none);
  posix_spawnattr_setsigdefault(&setup.attr, &every);
  posix_spawnattr_setflags(&setup.attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  return ::posix_spawn(&pid, path, &setup.actions, &setup.attr, argv, envp);
}

}  // namespace corral::sandbox
