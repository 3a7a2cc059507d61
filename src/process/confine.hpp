// src/process/confine.hpp: the confinement profile of one command, as the
// child applies it between clone and exec (user, mount, pid, network, ipc,
// uts and cgroup namespaces; capabilities, no_new_privs, seccomp), and what
// this host can enforce of it.
#pragma once

#include <vector>

#include "corral/process.hpp"

namespace corral::process {

// One entry per protection of `hardening.confinement` other than the
// resource limits (user_namespace, seccomp, pid_namespace, filesystem,
// network, environment, session): enforced on this host or why not. Probes
// the kernel once per process and caches what it found.
std::vector<Protection> confinement_protections(const Hardening& hardening);

}  // namespace corral::process
