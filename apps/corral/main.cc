// corral: bounded, contained execution of untrusted code and commands.
#include <cstdio>
#include <exception>

#include "subcommands.hpp"

namespace {

// A command line CLI11 refused: what is wrong, the usage line of the command
// it was for, and where to read more; exit 2. CLI11's own exit codes (105,
// 106, 109, ...) are none of corral's documented statuses.
int usage_error(const CLI::App& app, const CLI::ParseError& error) {
  const CLI::App* command = &app;
  std::string name = app.get_name();
  // The subcommand being parsed when CLI11 threw (it is recorded first).
  for (const CLI::App* sub : app.get_subcommands()) {
    command = sub;
    name += " " + sub->get_name();
  }
  std::string what = error.what();
  const std::vector<std::string> left = app.remaining();
  if (command == &app && !left.empty()) {
    // CLI11 says "A subcommand is required" for `corral nosuch` too.
    std::string commands;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) {
           return !s->get_group().empty();  // the hidden worker stays hidden
         }))
      commands += (commands.empty() ? "" : ", ") + sub->get_name();
    what = left.front() +
           (left.front().starts_with("-") ? " is not an option of corral; give a command first: "
                                          : " is not a command; the commands are ") +
           commands;
  }
  std::fprintf(stderr, "%s: %s\n%sRun `%s --help` for more.\n", name.c_str(), what.c_str(),
               CLI::Formatter().make_usage(command, name).c_str(), name.c_str());
  return corral::app::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"corral: bounded, contained execution of untrusted code and commands", "corral"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "corral 0.1.0");
  app.footer(corral::app::kExitStatusHelp);

  corral::app::Action action;
  corral::app::add_run_command(app, action);
  corral::app::add_command_commands(app, action);
  corral::app::add_exec_command(app, action);
  corral::app::add_worker_command(app, action);
  corral::app::add_daemon_commands(app, action);
  corral::app::add_mcp_command(app, action);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    sub->footer(corral::app::kExitStatusHelp);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with status 0: print them as CLI11 does.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    return usage_error(app, e);
  }
  try {
    return action ? action() : corral::app::kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "corral: internal: %s\n", e.what());
    return corral::app::kExitFailure;
  }
}
