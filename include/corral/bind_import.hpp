// corral/bind_import.hpp: a manifest written from a program's own help.
//
// `import_manifest` runs `PROGRAM [START...] --help` (and `-h` where --help
// shows a manual page or nothing it can read), reads the help's commands and
// flags (bind/help_text.hpp: Cobra, GNU getopt_long, git, argparse and click
// shapes), walks the subcommands it lists, bounded in depth, count and time,
// and writes a manifest (YAML) for `load_manifest`. Every help run is a
// supervised command under `hardening` (by default the confined profile: no
// network, a read-only minimal filesystem, an empty environment), so a
// program that does something else when asked for help does it there.
//
// What the help does not say is left out (positional args stay "any
// number"), and each guess is written with a `# review:` comment.
//
// Example (what `corral bind git` does):
//   corral::bind::ImportOptions options;
//   options.program = "git";
//   std::string yaml = corral::bind::import_manifest(options).manifest;
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "corral/process.hpp"

namespace corral::bind {

struct ImportOptions {
  std::string program;             // a path, or a name looked up in PATH
  std::vector<std::string> start;  // the subcommand to begin at ({"remote"}), empty for the root
  std::size_t max_depth = 3;       // levels of subcommands read below `start`
  std::size_t max_pages = 300;     // help runs at most
  std::chrono::milliseconds budget = std::chrono::minutes(2);     // all help runs together
  std::chrono::milliseconds per_page = std::chrono::seconds(10);  // one help run
  // Each help run's (default: confined, no network; RLIMIT_CPU half of
  // per_page unless set, so a page that spins or floods is killed).
  process::Hardening hardening;
};

struct ImportResult {
  std::string manifest;   // YAML
  std::size_t pages = 0;  // help pages read
  std::size_t runs = 0;   // help runs (a page may take two: --help, then -h)
  std::size_t commands = 0;
  std::size_t flags = 0;
  std::size_t reviews = 0;         // guesses marked for review
  std::vector<std::string> notes;  // what stopped the walk early, pages that could not be read
};

// Throws ExecutableNotFound when the program cannot be found or run, and
// std::invalid_argument when its help shows nothing corral can read.
ImportResult import_manifest(const ImportOptions& options);

// A name that matches ^[A-Za-z0-9_-]{1,64}$, close to `name` (the rule the
// binding holds operation names to): other characters become '_', and one
// too long keeps its head and a hash of the whole.
std::string suggested_operation_name(std::string_view name);

}  // namespace corral::bind
