// src/sandbox/seccomp_policy.hpp: the seccomp allow-list of the processes that run guests
// (pooled workers, and corral-ruby-helper for in-process Ruby).
//
// docs/security.md has the policy as tables, with why each syscall is
// allowed, refused or fatal; keep the two in step.
#pragma once

namespace corral::sandbox {

// install_seccomp_policy: loads the filter on every thread of the process
// (TSYNC). Unlisted syscalls fail with EPERM; hostile ones (exec, fork,
// sockets, ptrace, signals to other processes, mount, ...) and any other
// ABI kill the whole process with SIGSYS. Requires PR_SET_NO_NEW_PRIVS (or
// CAP_SYS_ADMIN). Throws std::runtime_error when the filter cannot be
// built or loaded.
void install_seccomp_policy();

}  // namespace corral::sandbox
