// corral/bind_cli11.hpp: a CommandTree from a C++ program's CLI11 app.
//
// Bind after every subcommand and option is registered: the tree is a
// snapshot. Each call then runs the program's own binary (`executable`) as a
// subprocess, exactly as a person would from a terminal.
//
// Mapping (CLI11 2.x):
//   - a subcommand is a command; nameless ones (option groups) lend their
//     options to their parent; group "" means hidden;
//   - an app is runnable when it has no subcommands or does not require one;
//   - options with a long name are flags; INT/UINT/FLOAT/TEXT/BOOLEAN map to
//     int64/uint64/float64/string/bool, flags (no value) to bool, options
//     taking several values to the matching *Array/*Slice type
//     (TEXT -> stringArray), marked `greedy` (CLI11 takes a `--` right after
//     such an option as the end of its values); any other type name (ENUM, CHAR, a custom
//     type) needs a codec in BindOptions::codecs or the bind fails;
//   - options with only a short name are not published;
//   - positionals are args; CLI11 options are not inherited by subcommands.
//
// Example:
//   CLI::App app{"tool"};
//   build_tool_cli(app);                               // the program's own setup
//   auto tree = corral::bind::tree_from_cli11(app, "/usr/local/bin/tool");
//   auto binding = corral::bind::Binding::bind(std::move(tree));
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "corral/bind.hpp"

namespace corral::bind {

// Snapshot of `app` (not retained). Throws std::invalid_argument if the app
// has no name.
CommandTree tree_from_cli11(const CLI::App& app, std::string executable);

}  // namespace corral::bind
