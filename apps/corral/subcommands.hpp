// apps/corral/subcommands.hpp: each `corral` subcommand registers itself on
// the CLI11 app; main() only wires them together.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "corral/sandbox.hpp"
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

// The text of FILE, or of stdin for "-". Throws std::invalid_argument when
// the file cannot be read.
std::string read_source(const std::string& file);

// The guest language of FILE: `flag` when given ("javascript" or "ruby",
// else std::invalid_argument), ruby for a .rb file, javascript otherwise.
sandbox::Language language_of(const std::string& flag, const std::string& file);

// Exit codes, listed in `corral --help`.
inline constexpr int kExitClean = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitAddressInUse = 2;
inline constexpr int kExitCannotSandbox = 5;

// `corral exec --server URL FILE`: run a script on an executor server.
void add_exec_command(CLI::App& app, Action& action);

// `corral mcp`: an MCP server on stdin/stdout.
void add_mcp_command(CLI::App& app, Action& action);

// `corral worker`: the hardened process a worker pool spawns (hidden).
void add_worker_command(CLI::App& app, Action& action);

}  // namespace corral::app
