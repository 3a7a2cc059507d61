// `corral worker`: the hardened process a WorkerPool spawns. Not for people:
// it speaks length-prefixed frames on the inherited fd and nothing else.
#include "engine.hpp"
#include "pool/worker.hpp"

namespace corral::app {

void add_worker_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("worker", engine_command_description("worker"));
  cmd->group("");  // hidden from --help
  auto settings = std::make_shared<pool::WorkerSettings>();
  auto no_harden = std::make_shared<bool>(false);
  cmd->add_option("--ipc-fd", settings->ipc_fd, "The inherited IPC socket")->capture_default_str();
  cmd->add_option("--max-frame", settings->max_frame, "Largest frame accepted")
      ->capture_default_str();
  cmd->add_option("--memory-ceiling", settings->memory_ceiling,
                  "RLIMIT_DATA in bytes (0: as inherited)")
      ->capture_default_str();
  cmd->add_flag("--no-harden", *no_harden, "Skip the lockdown (debugging only)");
  cmd->callback([&action, settings, no_harden] {
    action = [settings, no_harden] {
      settings->harden = !*no_harden;
      return pool::run_worker(*settings);
    };
  });
}

}  // namespace corral::app
