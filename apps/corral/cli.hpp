// apps/corral/cli.hpp: what both corral programs share: the exit statuses,
// how a command line is parsed and refused, and the small readers every
// subcommand uses. Nothing here links an engine.
//
// corral is two executables (apps/corral/README.md): bin/corral, the front
// (tools, call, exec, status, maintenance, and serve, check and mcp, which
// run guests only in workers: no V8, no mruby, so it starts in milliseconds
// and the daemon maps no engine), which hands the commands that run guests
// in its own process (run, worker) to libexec/corral/corral-engine by exec.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "corral/language.hpp"

namespace corral::app {

// A registered subcommand sets `action` to what runs when it was chosen; the
// action returns the process exit code.
using Action = std::function<int()>;

// Registers a program's subcommands on its CLI11 app.
using AddCommands = std::function<void(CLI::App& app, Action& action)>;

// A corral program's main(): parses argv with the commands `add` registers
// (usage errors exit 2 with the usage line), then runs the chosen action;
// an exception that escapes it is "corral: internal: ..." and exit 1.
int run_cli(int argc, char** argv, const AddCommands& add);

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

// EngineCommand: a subcommand the front hands to corral-engine. The engine
// registers each with this description; the front lists it in --help.
struct EngineCommand {
  const char* name;
  const char* description;
  bool hidden = false;
};
inline constexpr EngineCommand kEngineCommands[] = {
    {"run", "Run a JavaScript or Ruby file (or - for stdin) in the sandbox"},
    {"worker", "Serve a worker pool over an inherited socket (internal)", true},
};
// The engine command called `name`, or nullptr when it is none.
const EngineCommand* find_engine_command(std::string_view name);
// The description of the engine command `name` (it must be one).
const char* engine_command_description(std::string_view name);

// The text of FILE, or of stdin for "-". Throws std::invalid_argument when
// the file cannot be read.
std::string read_source(const std::string& file);

// The guest language of FILE: `flag` when given ("javascript", "typescript"
// or "ruby", else std::invalid_argument), ruby for a .rb file, typescript for
// .ts/.mts/.cts, javascript otherwise.
Language language_of(const std::string& flag, const std::string& file);

// A warning for each CORRAL_ variable in this process's environment that
// names no setting (core::unknown_variable_warnings).
std::vector<std::string> environment_warnings();

// "corral: warning: ..." on stderr, one line each.
void print_warnings(const std::vector<std::string>& warnings);

// How `corral check` and `corral status` name the worker protections:
// `protections` is pool::to_json's object.
void print_protections(const core::json::object& protections);

// A short summary of a daemon's /__status__ for a person, one line each
// (for status). Throws when `status` lacks a field it reads.
std::vector<std::string> describe_status(const core::json::object& status);

}  // namespace corral::app
