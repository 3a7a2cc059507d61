// corral/bind.hpp: expose a command-line program's commands as typed
// operations, each call run as one supervised subprocess.
//
// A `CommandTree` describes a program: its executable, its commands, their
// flags (name, type, required, default, description, hidden, deprecated) and
// positional args. It comes from a manifest file (`load_manifest_file`, YAML
// or JSON, schema in docs/commands.md) or from a C++ program's CLI11 app
// (`corral/bind_cli11.hpp`). `Binding::bind` takes a snapshot of it:
//   - which commands become operations: runnable ones that are not hidden or
//     deprecated (nor is any ancestor), not `help`/`completion` at the root,
//     not marked `omit`, and accepted by the exposure policy (which can only
//     remove; children of an unexposed parent are still visited);
//   - names: `<root>_<path joined by _>` (`prefix` replaces the root), explicit
//     renames per command path; two commands with one name fail the bind,
//     naming both; names must match ^[A-Za-z0-9_-]{1,64}$ (what the major
//     MCP clients and model APIs accept; the error suggests one that does);
//   - input `{"flags": {...}, "args": [...]}` (flags keyed by name,
//     additionalProperties false, required flags required), output
//     `{"stdout","stderr","exitCode","truncated"}`; each flag type has a codec
//     that publishes a JSON Schema and encodes `--name=value` tokens.
// A call runs: executable, command path (each command's fixed_args after its
// name), one `--name=value` per encoded value in flag order (or `--name
// value`, `-n value`), `--` (unless the command says separator: false), then
// the positional args. Input never chooses the
// executable, directory or environment. A value the command line cannot
// express faithfully fails `invalid_request` before any process starts.
//
// Example:
//   auto tree = corral::bind::load_manifest_file("examples/coreutils.yaml");
//   auto binding = corral::bind::Binding::bind(std::move(tree));
//   for (const auto& op : binding->operations()) puts(op.name.c_str());  // never takes a slot
//   corral::Execution e = binding->call("coreutils_echo", R"({"args":["-rf","/"]})");
//   corral::bind::output_view(e);  // {"stdout":"-rf
//   /\n","stderr":"","exitCode":0,"truncated":false}
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "corral/execution.hpp"
#include "corral/process.hpp"

namespace corral::bind {

// FlagSpec: one flag as the program declares it.
struct FlagSpec {
  std::string name;             // long name, without dashes
  std::string type = "string";  // codec name (see docs/commands.md) or a custom type
  bool required = false;
  std::optional<std::string> default_json;  // JSON text, published as "default"
  std::string description;
  bool hidden = false;
  bool deprecated = false;
  // The program keeps taking values after this flag until the next option,
  // and takes a `--` right after it as the end of those values (CLI11's
  // multi-value options do). When such a flag is encoded last, the binding
  // sends `--` twice so the positionals still follow a separator.
  bool greedy = false;
  // JSON Schema keywords that narrow the values the flag takes ({"enum":
  // [..]}, {"pattern": ".."}, {"minimum": 1, "maximum": 9}, minLength,
  // maxLength): published in its schema and enforced before a call, on the
  // value or on each element of a list flag. Empty: none. The manifest's
  // `enum`, `pattern`, `min` and `max` fill it.
  std::string constraints_json;
  // A one-letter alias (`-n`). The call uses it only when `long_form` is
  // false (the program has no `--name`); `name` is still the input's key.
  std::string short_name;
  bool long_form = true;
  // How a value follows the option: `--name=value` (equals) or `--name
  // value` (separate, for programs whose parser wants two arguments). A
  // short option is always separate. A separate value that starts with '-'
  // and is no number is refused: the program could take it for an option.
  enum class Style { equals, separate };
  Style style = Style::equals;
};

// ArgSpec: one positional argument (all positionals are strings).
struct ArgSpec {
  std::string name;
  std::string description;
  bool required = false;
  bool variadic = false;  // last only: takes the rest
};

// Annotations: hints about a command that a host may publish with its
// operation (MCP tool annotations). corral acts on one only: code mode asks
// the MCP client's user before running a command whose `destructive` is true
// (docs/mcp.md, "Approvals"); unset means the host's default.
struct Annotations {
  std::string title;
  std::optional<bool> read_only;    // readOnlyHint
  std::optional<bool> destructive;  // destructiveHint
  std::optional<bool> idempotent;   // idempotentHint
  std::optional<bool> open_world;   // openWorldHint

  friend bool operator==(const Annotations&, const Annotations&) = default;
};

// ConfinementOverride: a command's `confinement:` in a manifest. Each field
// that is set replaces the one the command inherits (from its parent, and at
// the root from CommandTree::hardening.confinement); subcommands inherit the
// result. `binds` replaces the inherited list as a whole.
struct ConfinementOverride {
  std::optional<bool> user_namespace;  // user: confined (true) | host (false)
  std::optional<std::uint32_t> uid;
  std::optional<std::uint32_t> gid;
  std::optional<bool> seccomp;
  std::optional<bool> pid_namespace;
  std::optional<process::FilesystemView> filesystem;
  std::optional<std::vector<process::Bind>> binds;
  std::optional<bool> network;  // true: the host's network
  // Outer optional: whether the manifest set it; inner: the limit (nullopt
  // for "none").
  std::optional<std::optional<std::uint64_t>> processes;
  std::optional<std::optional<std::uint64_t>> memory_bytes;
  std::optional<std::optional<double>> cpus;
  std::optional<bool> strict;

  // Applies every set field to `confinement`.
  void apply_to(process::Confinement& confinement) const;
  bool empty() const { return *this == ConfinementOverride{}; }
  friend bool operator==(const ConfinementOverride&, const ConfinementOverride&) = default;
};

// CommandSpec: one command in the tree.
struct CommandSpec {
  std::string name;
  std::string description;
  bool runnable = true;  // false for a pure group
  bool hidden = false;
  bool deprecated = false;
  bool omit = false;                          // never an operation (children still are)
  std::optional<std::string> operation_name;  // explicit name, replaces the derived one
  std::vector<FlagSpec> flags;                // local flags
  std::vector<FlagSpec> persistent_flags;     // local, and inherited by descendants
  std::optional<std::vector<ArgSpec>> args;   // nullopt: any number of positionals
  std::vector<CommandSpec> commands;
  Annotations annotations;          // published with the operation, never inherited
  ConfinementOverride confinement;  // inherited by subcommands
  // Arguments written right after this command's name (the root's right
  // after the executable), before its subcommand or flags: `git --no-pager`.
  std::vector<std::string> fixed_args;
  // Inherited by subcommands when unset. false: no `--` before the
  // positional args (for programs that would take `--` as an arg), and an
  // arg starting with '-' is then refused, as it would reach the program as
  // an option.
  std::optional<bool> separator;
  // Inherited by subcommands when unset. Exit statuses that mean success
  // (default {0}): `grep` exits 1 for "no match". The result keeps the
  // status in `exitCode`.
  std::optional<std::vector<int>> ok_exit_codes;
};

// Selectors: which commands and flags a tree offers, by command path below
// the root (words joined by spaces; `*` stands for any one word). A pattern
// names a command and everything under it. Empty `include`: all.
struct Selectors {
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  // "PATH --flag" or "--flag" (every command): flags withheld.
  std::vector<std::string> exclude_flags;

  bool empty() const { return include.empty() && exclude.empty() && exclude_flags.empty(); }
  // Whether the command at `path` is offered / its flag `flag` is.
  bool offers(const std::vector<std::string>& path) const;
  bool offers_flag(const std::vector<std::string>& path, const std::string& flag) const;
  // Throws std::invalid_argument for a pattern that is empty or malformed.
  void validate() const;
};

// CommandTree: a program and its commands.
struct CommandTree {
  std::string executable;  // path or bare name (resolved in PATH at bind time)
  CommandSpec root;        // root.name is the first segment of operation names
  // Every operation's profile, before its commands' `confinement` overrides.
  // Deny by default (process::Hardening's defaults: the confined profile, an
  // empty environment allow-list).
  process::Hardening hardening;
  process::SupervisorOptions supervisor;
  // Replaces root.name as the first segment of operation names
  // (BindOptions::prefix wins over it).
  std::optional<std::string> prefix;
  // Applied before BindOptions::exposure and flag_filter, which may only
  // remove more.
  Selectors selectors;
};

// CommandInfo: what the exposure policy and flag filter see.
struct CommandInfo {
  std::vector<std::string> path;  // below the root; empty for the root itself
  const CommandSpec* spec = nullptr;
};

// TextCodec: a codec for a flag whose command-line form is one string, with
// JSON Schema constraints that narrow the published schema ({"enum":[..]},
// {"pattern":..}, {"maxLength":..}). Constraints may not change "type"; the
// enum, pattern and length constraints are also enforced before a call.
struct TextCodec {
  std::string constraints_json = "{}";
};

// BindOptions: choices of the host, not of the program.
struct BindOptions {
  std::optional<std::string> prefix;  // replaces the root segment of every name
  // Command path below the root, joined by spaces ("foo bar"), to name.
  std::map<std::string, std::string> operation_names;
  // Returns false to withhold a command that passed the mandatory filters.
  std::function<bool(const CommandInfo&)> exposure;
  // Returns false to withhold a flag of a command.
  std::function<bool(const CommandInfo&, const FlagSpec&)> flag_filter;
  // Codecs by flag name; take precedence over the built-in type codecs.
  std::map<std::string, TextCodec> codecs;
  // When set, every operation runs with exactly this confinement: it replaces
  // the tree's and every command's `confinement` (the environment, rlimits and
  // working directory still come from CommandTree::hardening). Precedence,
  // strongest first: this, the command's own override, its ancestors'
  // (nearest first), the tree's, the confined default.
  std::optional<process::Confinement> confinement;
};

// Operation: one bound command, as discovery shows it.
struct Operation {
  std::string name;
  std::string description;
  std::vector<std::string> command_path;  // below the root
  std::string input_schema;               // JSON Schema (text)
  std::string output_schema;              // JSON Schema (text)
  Annotations annotations;                // from the command's spec
  // What every call of this operation runs with (the tree's hardening with
  // the effective confinement), and what this host enforces of it
  // (process::Supervisor::protections).
  process::Hardening hardening;
  std::vector<process::Protection> protections;
};

// ExecutableNotFound: the bind's executable does not exist or cannot be run
// (`corral tools` and `corral call` report it as setup_error).
class ExecutableNotFound : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Binding: a frozen snapshot of a tree's operations plus the Supervisor that
// runs their calls.
//
// Thread-safe: operations(), find(), argv_for(), call(), status() and
// shutdown() may be called concurrently. Discovery never takes a slot.
// Destruction shuts the supervisor down (see process::Supervisor).
class Binding {
 public:
  // Binds `tree`. Throws std::invalid_argument naming what is wrong: a name
  // collision (both command paths), a bad name, a flag type with no codec
  // (command, flag, type), a codec that changes its type, an invalid
  // default, a bind whose source is not an existing absolute path or whose
  // target is not absolute; ExecutableNotFound (an std::invalid_argument)
  // for an executable that does not exist. Throws corral::SetupError
  // (unavailable) if the supervisor's forced unit is not available.
  static std::unique_ptr<Binding> bind(CommandTree tree, const BindOptions& options = {});
  ~Binding();

  const std::vector<Operation>& operations() const noexcept;
  // nullptr when there is no such operation.
  const Operation* find(std::string_view name) const noexcept;

  // The argv a call with `input_json` would run (no process starts).
  // Throws corral::SandboxError (invalid_request) for an unknown operation or
  // an input the schema or the command line cannot take: duplicate keys, a
  // number the JSON text writes that no double holds exactly (1e400,
  // 9007199254740993.0), a value out of its flag's range, an argv plus
  // environment over the kernel's limit (_SC_ARG_MAX, capped at 6 MiB as
  // execve caps it, and 131072 bytes per string).
  std::vector<std::string> argv_for(std::string_view name, std::string_view input_json) const;

  // Runs one call with its operation's hardening. Returns the Execution (its
  // value() is the output view) of a zero exit; throws like
  // process::Supervisor::run otherwise (the Execution attached to
  // command_failed, timeout, cancelled and cleanup_failed also has the output
  // view as its value), plus invalid_request before anything starts (see
  // argv_for; also an argument list and environment over the kernel's exec
  // limits), and unavailable naming the executable when it was removed after
  // the bind.
  Execution call(std::string_view name, std::string_view input_json,
                 const process::RunOptions& options = {});

  process::Status status() const;
  bool shutdown(process::Clock::time_point deadline);

 private:
  class Impl;
  explicit Binding(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// {"stdout":..,"stderr":..,"exitCode":..,"truncated":..,"replaced":true?} for
// any Execution (exitCode -1 when the command was stopped before it exited;
// "replaced" only when output bytes that were not UTF-8 became U+FFFD).
std::string output_view(const Execution& execution);

// A profile in the manifest's vocabulary: {"user","uid","gid","seccomp",
// "pid_namespace","filesystem","binds","network","limits":{"processes",
// "memory","cpus"},"strict","environment":{"allow","set"},
// "working_directory"} (JSON text), for `corral tools` and status pages.
std::string profile_json(const process::Hardening& hardening);

// The JSON Schema every operation's output follows.
std::string output_schema();

// Parses a manifest (YAML, or JSON when it starts with '{'). Throws
// std::invalid_argument naming the offending key.
CommandTree load_manifest(std::string_view text);
// Reads and parses a manifest file; relative `executable`,
// `working_directory` and bind sources resolve against the file's directory.
CommandTree load_manifest_file(const std::string& path);

}  // namespace corral::bind
