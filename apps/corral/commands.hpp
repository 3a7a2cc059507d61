// apps/corral/commands.hpp: the front's subcommands (bin/corral), each
// registering itself on the CLI11 app. None of them links an engine.
#pragma once

#include "cli.hpp"

namespace corral::app {

// `corral tools --manifest FILE` and `corral call --manifest FILE NAME INPUT`:
// bound commands.
void add_command_commands(CLI::App& app, Action& action);

// `corral exec --server URL FILE`: run a script on an executor server.
void add_exec_command(CLI::App& app, Action& action);

// `corral status` and `corral maintenance on|off|status`: ask a running
// daemon's admin listener.
void add_admin_commands(CLI::App& app, Action& action);

}  // namespace corral::app
