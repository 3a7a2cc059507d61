// apps/corral/subcommands.hpp: each `corral` subcommand registers itself on
// the CLI11 app; main() only wires them together.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace corral::app {

// A registered subcommand sets `action` to what runs when it was chosen; the
// action returns the process exit code.
using Action = std::function<int()>;

// `corral run FILE|-`: run a script in the JavaScript sandbox.
void add_run_command(CLI::App& app, Action& action);

// `corral tools --manifest FILE` and `corral call --manifest FILE NAME INPUT`:
// bound commands.
void add_command_commands(CLI::App& app, Action& action);

// `corral check`: which protections this machine allows.
void add_check_command(CLI::App& app, Action& action);

// `corral exec --server URL FILE`: run a script on an executor server.
void add_exec_command(CLI::App& app, Action& action);

// `corral worker`: the hardened process a worker pool spawns (hidden).
void add_worker_command(CLI::App& app, Action& action);

}  // namespace corral::app
