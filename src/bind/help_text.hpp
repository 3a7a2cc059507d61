// src/bind/help_text.hpp: what a program's own `--help` says, read from
// its text. One tolerant reader for the shapes real programs print: Cobra
// (`Usage:`, `Available Commands:`, `Flags:`, `Global Flags:` with pflag's
// type words), GNU getopt_long (`-f, --file=ARCHIVE`), git's parse-options
// (`--decorate-refs <pattern>`, command groups), Python's argparse and click
// (`--format {json,yaml}`, `positional arguments:`, `Commands:`).
//
// Everything here is a guess from text a program chose to print: each guess
// that could be wrong leaves a `review` note, and `corral bind` writes the
// notes next to what they are about. The reader is linear in the text and
// never fails: text it cannot place is skipped.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace corral::bind::help {

enum class Style { unknown, cobra, gnu, git, argparse };

std::string_view to_string(Style style);

// HelpFlag: one option line.
struct HelpFlag {
  std::string name;                         // the long name without dashes, else the short letter
  std::string short_name;                   // one letter, or empty
  bool long_form = true;                    // false: the program only shows `-x`
  std::string value_name;                   // what the help calls the value; empty for a switch
  std::string type;                         // a codec name (docs/commands.md)
  std::vector<std::string> choices;         // an enum the help lists
  std::optional<std::string> default_json;  // a default the help shows, typed
  std::string description;
  bool global = false;              // listed under "Global Flags" (inherited from an ancestor)
  std::vector<std::string> review;  // why a person should look at it again
};

// HelpCommand: one line of a command list.
struct HelpCommand {
  std::string name;
  std::string description;
};

// HelpPage: one `--help` output.
struct HelpPage {
  Style style = Style::unknown;
  std::string description;         // the first paragraph that is not a usage line
  std::vector<std::string> usage;  // the usage lines, as printed
  std::vector<HelpFlag> flags;
  std::vector<HelpCommand> commands;
  // argparse's "positional arguments" (a subcommand list aside): which
  // positionals the command takes. argparse refuses a `--` that no
  // positional follows, so a command without them is written without it.
  std::vector<HelpCommand> positionals;
  // True when every usage line ends in "[command]": a group that does not
  // run by itself (Cobra).
  bool group_only = false;
  // True when the text reads like a manual page (`GIT-LOG(1)`), which is
  // what some programs show for --help: `-h` is worth a try instead.
  bool manual_page = false;
};

// Reads `text` (UTF-8; other bytes are kept as they are). Bounded: at most
// kMaxFlags flags and kMaxCommands commands are kept, descriptions are cut
// at kMaxDescription bytes on a character boundary.
HelpPage parse(std::string_view text);

inline constexpr std::size_t kMaxFlags = 500;
inline constexpr std::size_t kMaxCommands = 500;
inline constexpr std::size_t kMaxDescription = 1024;

}  // namespace corral::bind::help
