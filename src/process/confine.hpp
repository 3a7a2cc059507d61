// src/process/confine.hpp: the confinement profile of one command, as the
// child applies it between clone and exec (user, pid, network, ipc, uts and
// cgroup namespaces; capabilities, no_new_privs, seccomp; the filesystem view
// is in filesystem_view.hpp), and what this host
// can enforce of it.
#pragma once

#include <linux/filter.h>

#include <string>
#include <vector>

#include "corral/process.hpp"
#include "process/filesystem_view.hpp"

namespace corral::process {

// One entry per protection of `hardening.confinement` other than the
// resource limits (user_namespace, seccomp, pid_namespace, filesystem,
// network, environment, session): enforced on this host or why not. Probes
// the kernel once per process and caches what it found.
std::vector<Protection> confinement_protections(const Hardening& hardening);

// What the kernel lets this process create (probed once, cached).
struct ConfinementSupport {
  bool user_namespace = false;
  bool pid_namespace = false;  // with ipc, uts and cgroup namespaces
  bool network_namespace = false;
  bool seccomp = false;
  // A mount namespace for the filesystem view (in a user namespace when
  // there is one, else as root), and a procfs of its own.
  FilesystemSupport filesystem;
};
const ConfinementSupport& confinement_support();

// The command's seccomp filter (docs/security.md, "Bound commands"), built
// once with libseccomp and exported as classic BPF for the child to load
// with a raw seccomp(2). Empty with `error` set when it could not be built.
struct SeccompProgram {
  std::vector<sock_filter> filter;
  std::string error;
};
const SeccompProgram& command_seccomp_program();

}  // namespace corral::process
