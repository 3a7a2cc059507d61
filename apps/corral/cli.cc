// What both corral programs share (cli.hpp).
#include "cli.hpp"

#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <stdexcept>

#include "core/variables.hpp"

extern char** environ;

namespace corral::app {

namespace {

// A command line CLI11 refused: what is wrong, the usage line of the command
// it was for, and where to read more; exit 2. CLI11's own exit codes (105,
// 106, 109, ...) are none of corral's documented statuses.
int usage_error(const CLI::App& app, const CLI::ParseError& error) {
  const CLI::App* command = &app;
  std::string name = app.get_name();
  // The subcommand being parsed when CLI11 threw (it is recorded first).
  for (const CLI::App* sub : app.get_subcommands()) {
    command = sub;
    name += " " + sub->get_name();
  }
  std::string what = error.what();
  const std::vector<std::string> left = app.remaining();
  if (command == &app && !left.empty()) {
    // CLI11 says "A subcommand is required" for `corral nosuch` too.
    std::string commands;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) {
           return !s->get_group().empty();  // the hidden worker stays hidden
         }))
      commands += (commands.empty() ? "" : ", ") + sub->get_name();
    what = left.front() +
           (left.front().starts_with("-") ? " is not an option of corral; give a command first: "
                                          : " is not a command; the commands are ") +
           commands;
  }
  std::fprintf(stderr, "%s: %s\n%sRun `%s --help` for more.\n", name.c_str(), what.c_str(),
               CLI::Formatter().make_usage(command, name).c_str(), name.c_str());
  return kExitUsage;
}

}  // namespace

int run_cli(int argc, char** argv, const AddCommands& add) {
  CLI::App app{"corral: bounded, contained execution of untrusted code and commands", "corral"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "corral 0.1.0");
  app.footer(kExitStatusHelp);

  Action action;
  add(app, action);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    sub->footer(kExitStatusHelp);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with status 0: print them as CLI11 does.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    return usage_error(app, e);
  }
  try {
    return action ? action() : kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "corral: internal: %s\n", e.what());
    return kExitFailure;
  }
}

const EngineCommand* find_engine_command(std::string_view name) {
  for (const EngineCommand& command : kEngineCommands) {
    if (name == command.name) return &command;
  }
  return nullptr;
}

const char* engine_command_description(std::string_view name) {
  if (const EngineCommand* command = find_engine_command(name)) return command->description;
  throw std::logic_error("no engine command " + std::string(name));
}

std::string read_source(const std::string& file) {
  if (file == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::invalid_argument("cannot read " + file);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Language language_of(const std::string& flag, const std::string& file) {
  if (!flag.empty()) return parse_language(flag);
  const auto ends_with = [&](std::string_view suffix) {
    return file.size() > suffix.size() &&
           file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".rb")) return Language::ruby;
  if (ends_with(".ts") || ends_with(".mts") || ends_with(".cts")) return Language::typescript;
  return Language::javascript;
}

std::vector<std::string> environment_warnings() {
  return core::unknown_variable_warnings(core::environment_names(environ));
}

void print_warnings(const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings) std::fprintf(stderr, "corral: warning: %s\n", w.c_str());
}

}  // namespace corral::app
