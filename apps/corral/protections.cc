// How `corral check` prints the worker protections.
#include <cstdio>

#include "subcommands.hpp"

namespace corral::app {

void print_protections(const pool::Protections& p) {
  auto line = [](const char* name, bool active) {
    std::printf("  %-22s %s\n", name, active ? "active" : "not available");
  };
  std::printf("Worker protections on this machine:\n");
  line("user namespace", p.user_namespace);
  line("network namespace", p.network_namespace);
  line("pid namespace", p.pid_namespace);
  line("parent-death signal", p.parent_death_signal);
  line("inherited fds closed", p.fds_closed);
  line("rlimits", p.rlimits);
  line("no_new_privs", p.no_new_privs);
  line("seccomp allow-list", p.seccomp);
  for (const std::string& note : p.notes) std::printf("  note: %s\n", note.c_str());
}

}  // namespace corral::app
