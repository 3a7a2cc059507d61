// src/bind/cli11_tree.cc: CLI11 App -> CommandTree (mapping documented in
// include/corral/bind_cli11.hpp).
#include <charconv>
#include <filesystem>
#include <stdexcept>

#include "core/json.hpp"
#include "corral/bind_cli11.hpp"

namespace corral::bind {

namespace {

namespace json = core::json;

std::string base_type(const CLI::Option& option) {
  std::string name = option.get_type_name();
  return name.substr(0, name.find(':'));
}

// The corral type of a CLI11 option, or the CLI11 type name when none fits
// (the bind then fails unless a codec is registered for the flag).
std::string flag_type(const CLI::Option& option) {
  if (option.get_expected_max() == 0) return "bool";
  std::string base = base_type(option);
  bool many = option.get_expected_max() > 1;
  if (base == "INT") return many ? "int64Slice" : "int64";
  if (base == "UINT") return many ? "uintSlice" : "uint64";
  if (base == "FLOAT") return many ? "float64Slice" : "float64";
  if (base == "TEXT") return many ? "stringArray" : "string";
  if (base == "BOOLEAN") return many ? "boolSlice" : "bool";
  return base.empty() ? "UNKNOWN" : base;
}

// The default as JSON text, when CLI11 captured one this type can carry.
std::optional<std::string> default_of(const CLI::Option& option, const std::string& type) {
  std::string text = option.get_default_str();
  if (text.empty()) return std::nullopt;
  if (type == "string") return json::serialize(json::value(text));
  if (type == "bool") {
    if (text == "true" || text == "1") return "true";
    if (text == "false" || text == "0") return "false";
    return std::nullopt;
  }
  if (type == "int64" || type == "uint64" || type == "float64") {
    double number = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return text;
  }
  return std::nullopt;
}

void add_options(const CLI::App& app, CommandSpec& spec) {
  for (const CLI::Option* option : app.get_options()) {
    if (!option->nonpositional()) {
      if (!option->get_positional()) continue;
      ArgSpec arg;
      arg.name = option->get_name();
      arg.description = option->get_description();
      arg.required = option->get_required();
      arg.variadic = option->get_expected_max() > 1;
      if (!spec.args) spec.args.emplace();
      spec.args->push_back(std::move(arg));
      continue;
    }
    const auto& long_names = option->get_lnames();
    if (long_names.empty()) continue;  // short-only: no --name=value form
    FlagSpec flag;
    flag.name = long_names.front();
    flag.type = flag_type(*option);
    flag.required = option->get_required();
    flag.description = option->get_description();
    flag.hidden = option->get_group().empty();
    flag.greedy = option->get_expected_max() > 1;
    if (flag.type != "bool" || option->get_expected_max() != 0) {
      flag.default_json = default_of(*option, flag.type);
    }
    if (flag.name == "help" || flag.name == "help-all") continue;
    spec.flags.push_back(std::move(flag));
  }
}

CommandSpec command_from(const CLI::App& app, const std::string& name) {
  CommandSpec spec;
  spec.name = name;
  spec.description = app.get_description();
  spec.hidden = app.get_group().empty();
  add_options(app, spec);
  auto children = app.get_subcommands([](const CLI::App*) { return true; });
  for (const CLI::App* child : children) {
    if (child->get_name().empty()) {
      add_options(*child, spec);  // an option group
      continue;
    }
    spec.commands.push_back(command_from(*child, child->get_name()));
  }
  spec.runnable = spec.commands.empty() || app.get_require_subcommand_min() == 0;
  // An app declaring no positionals takes none.
  if (!spec.args && !app.get_allow_extras()) spec.args.emplace();
  return spec;
}

}  // namespace

CommandTree tree_from_cli11(const CLI::App& app, std::string executable) {
  CommandTree tree;
  tree.executable = std::move(executable);
  std::string name = app.get_name();
  if (name.empty()) name = std::filesystem::path(tree.executable).filename().string();
  if (name.empty()) throw std::invalid_argument("the CLI11 app has no name");
  tree.root = command_from(app, name);
  tree.root.hidden = false;  // the root's group is meaningless
  return tree;
}

}  // namespace corral::bind
