// apps/corral/commands.hpp: the front's subcommands (bin/corral), each
// registering itself on the CLI11 app. None of them links an engine: serve,
// check and mcp run guests in workers (corral-engine worker), never here.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli.hpp"
#include "daemon/settings.hpp"

namespace corral::app {

// `corral tools --manifest FILE` and `corral call --manifest FILE NAME INPUT`:
// bound commands.
void add_command_commands(CLI::App& app, Action& action);

// `corral exec --server URL FILE`: run a script on an executor server.
void add_exec_command(CLI::App& app, Action& action);

// `corral status` and `corral maintenance on|off|status`: ask a running
// daemon's admin listener.
void add_admin_commands(CLI::App& app, Action& action);

// serve, check and mcp, as `corral --help` lists them. Each parses the ~80
// daemon settings, and building their CLI11 options cost every `corral`
// process ~3.5 M instructions (six times the rest of `corral --version`), so
// the front registers them in full only when argv[1] names one of them and
// lists them by description otherwise (front_main.cc).
struct DaemonCommand {
  const char* name;
  const char* description;
};
inline constexpr DaemonCommand kDaemonCommands[] = {
    {"serve", "Run the executor daemon (WebSocket protocol, probes, metrics, admin listener)"},
    {"check", "Run one execution end to end and report what this machine enforces"},
    {"mcp", "Serve MCP on stdin/stdout: code mode (execute) and bound commands as tools"},
};
// The daemon command called `name`, or nullptr when it is none.
const DaemonCommand* find_daemon_command(std::string_view name);

// `corral serve` (the daemon) and `corral check`.
void add_serve_commands(CLI::App& app, Action& action);

// `corral mcp`: an MCP server on stdin/stdout; `corral mcp config CLIENT`
// prints or writes a client's entry for it (cmd_mcp_config.cc).
void add_mcp_command(CLI::App& app, Action& action);
void add_mcp_config_command(CLI::App& mcp, Action& action);

// Parses the settings, printing every refused value on stderr. `warnings`
// gets the environment's warnings for the caller's log; when the settings
// are refused (nullopt) they have been printed with the errors instead.
// Without a `worker` setting, workers are corral-engine (engine_path.hpp):
// when it cannot be found, that is printed and the settings are refused.
// `listening`: the command opens the executor and admin listeners (serve,
// check), so daemon::listening_errors refuse the settings too; `corral mcp`
// on stdio listens nowhere.
std::optional<daemon::Settings> parse_settings(const daemon::SettingsParser& parser,
                                               std::vector<std::string>& warnings, bool listening);

}  // namespace corral::app
