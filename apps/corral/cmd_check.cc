// `corral check`: what this machine allows corral to do. For now the worker
// protections (docs/security.md); the daemon's settings join it later.
#include <cstdio>

#include "pool/lockdown.hpp"
#include "subcommands.hpp"

namespace corral::app {

namespace {

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

}  // namespace

void add_check_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("check", "Report what this machine allows corral to enforce");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print the protections as one JSON object");
  cmd->callback([&action, json] {
    action = [json] {
      // Probed in a child process, before this process starts V8.
      const pool::Protections protections = pool::probe_protections();
      if (*json) {
        std::printf("%s\n", pool::to_json(protections).c_str());
      } else {
        print_protections(protections);
      }
      // Workers refuse to run guests without these two.
      return protections.no_new_privs && protections.seccomp ? 0 : 1;
    };
  });
}

}  // namespace corral::app
