// corral: bounded, contained execution of untrusted code and commands.
#include <cstdio>
#include <exception>

#include "subcommands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"corral: bounded, contained execution of untrusted code and commands"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "corral 0.1.0");

  corral::app::Action action;
  corral::app::add_run_command(app, action);
  corral::app::add_command_commands(app, action);
  corral::app::add_exec_command(app, action);
  corral::app::add_worker_command(app, action);
  corral::app::add_check_command(app, action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    return action ? action() : 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "corral: internal: %s\n", e.what());
    return 1;
  }
}
