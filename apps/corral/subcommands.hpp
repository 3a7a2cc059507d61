// apps/corral/subcommands.hpp: each `corral` subcommand registers itself on
// the CLI11 app; main() only wires them together.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "core/json.hpp"
#include "corral/sandbox.hpp"
#include "daemon/settings.hpp"
#include "pool/lockdown.hpp"

namespace corral::app {

// A registered subcommand sets `action` to what runs when it was chosen; the
// action returns the process exit code.
using Action = std::function<int()>;

// `corral run FILE|-`: run a script in the JavaScript sandbox.
void add_run_command(CLI::App& app, Action& action);

// `corral tools --manifest FILE` and `corral call --manifest FILE NAME INPUT`:
// bound commands.
void add_command_commands(CLI::App& app, Action& action);

// `corral serve` (the daemon), `corral check`, `corral status` and
// `corral maintenance on|off`.
void add_daemon_commands(CLI::App& app, Action& action);

// Prints which worker protections are active (for check).
void print_protections(const pool::Protections& protections);

// A short summary of a daemon's /__status__ for a person, one line each
// (for status). Throws when `status` lacks a field it reads.
std::vector<std::string> describe_status(const core::json::object& status);

// A warning for each CORRAL_ variable in this process's environment that
// names no setting (daemon::unknown_variable_warnings).
std::vector<std::string> environment_warnings();

// "corral: warning: ..." on stderr, one line each.
void print_warnings(const std::vector<std::string>& warnings);

// Parses the settings, printing every refused value on stderr. `warnings`
// gets the environment's warnings for the caller's log; when the settings
// are refused (nullopt) they have been printed with the errors instead.
std::optional<daemon::Settings> parse_settings(const daemon::SettingsParser& parser,
                                               std::vector<std::string>& warnings);

// The text of FILE, or of stdin for "-". Throws std::invalid_argument when
// the file cannot be read.
std::string read_source(const std::string& file);

// The guest language of FILE: `flag` when given ("javascript" or "ruby",
// else std::invalid_argument), ruby for a .rb file, javascript otherwise.
sandbox::Language language_of(const std::string& flag, const std::string& file);

// Exit statuses, listed in `corral --help` (kExitStatusHelp) and
// docs/operations.md. 2 is every kind of bad invocation: a command line that
// cannot be parsed, a refused flag of run or exec, an address in use.
inline constexpr int kExitClean = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitAddressInUse = 2;
inline constexpr int kExitForcedStop = 3;  // serve: a second SIGTERM/SIGINT
inline constexpr int kExitCannotSandbox = 5;
inline constexpr const char* kExitStatusHelp =
    "Exit status:\n"
    "  0  success\n"
    "  1  the run, call or request failed (\"corral: CODE: message\" on stderr); settings\n"
    "     refused (serve, check, mcp); a stop that outlived its grace (serve)\n"
    "  2  bad invocation: the command line was not understood (the usage line is\n"
    "     printed); a flag value or script refused before anything ran (run, exec);\n"
    "     the address is in use (serve)\n"
    "  3  a second SIGTERM or SIGINT during the stop: workers killed, no drain (serve)\n"
    "  5  this machine cannot run sandboxed code (check)\n";

// `corral exec --server URL FILE`: run a script on an executor server.
void add_exec_command(CLI::App& app, Action& action);

// `corral mcp`: an MCP server on stdin/stdout.
void add_mcp_command(CLI::App& app, Action& action);

// `corral worker`: the hardened process a worker pool spawns (hidden).
void add_worker_command(CLI::App& app, Action& action);

}  // namespace corral::app
