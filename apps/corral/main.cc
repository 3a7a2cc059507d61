// corral: bounded, contained execution of untrusted code and commands.
#include <cstdio>
#include <exception>

#include "subcommands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"corral: bounded, contained execution of untrusted code and commands"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "corral 0.1.0");
  app.footer(
      "Exit codes:\n"
      "  0  clean\n"
      "  1  any other failure, including refused settings\n"
      "  2  the address is in use (serve)\n"
      "  5  this machine cannot run sandboxed code (check)");

  corral::app::Action action;
  corral::app::add_run_command(app, action);
  corral::app::add_command_commands(app, action);
  corral::app::add_exec_command(app, action);
  corral::app::add_worker_command(app, action);
  corral::app::add_daemon_commands(app, action);
  corral::app::add_mcp_command(app, action);

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
