// apps/corral/engine.hpp: the subcommands of corral-engine, the program that
// links V8 and mruby: run, serve, check, mcp and worker (kEngineCommands).
// bin/corral execs it for them (front_main.cc).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "daemon/settings.hpp"

namespace corral::app {

// `corral run FILE|-`: run a script in the sandbox.
void add_run_command(CLI::App& app, Action& action);

// `corral serve` (the daemon) and `corral check`.
void add_serve_commands(CLI::App& app, Action& action);

// `corral mcp`: an MCP server on stdin/stdout.
void add_mcp_command(CLI::App& app, Action& action);

// `corral worker`: the hardened process a worker pool spawns (hidden).
void add_worker_command(CLI::App& app, Action& action);

// Parses the settings, printing every refused value on stderr. `warnings`
// gets the environment's warnings for the caller's log; when the settings
// are refused (nullopt) they have been printed with the errors instead.
std::optional<daemon::Settings> parse_settings(const daemon::SettingsParser& parser,
                                               std::vector<std::string>& warnings);

}  // namespace corral::app
