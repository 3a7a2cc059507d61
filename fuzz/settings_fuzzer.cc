// fuzz/settings_fuzzer.cc: the daemon's settings (daemon::SettingsParser on a
// real CLI11 command line plus an environment), then the translations the
// daemon makes from them.
//
// Input: lines; a line "CORRAL_NAME=value" is an environment variable, any
// other line one command-line argument. Values that name files are left out
// (a setting may name a token, manifest or upstream file, and the fuzzer must
// not read the machine's files). Invariants: the command line parses or
// CLI11 refuses it; settings parse or every problem is listed (a non-empty
// list of one-line messages); valid settings translate without a throw.
#include <map>
#include <stdexcept>

#include "daemon/settings.hpp"
#include "fuzz_util.hpp"

using corral::fuzz::fail;

namespace {

// Values that could make the parser open a file.
bool names_a_file(std::string_view arg) {
  return arg.find('/') != std::string_view::npos || arg.find("file") != std::string_view::npos ||
         arg.find("manifest") != std::string_view::npos ||
         arg.find("upstream") != std::string_view::npos ||
         arg.find("UPSTREAM") != std::string_view::npos ||
         arg.find("FILE") != std::string_view::npos ||
         arg.find("MANIFEST") != std::string_view::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = corral::fuzz::text_of(data, size);
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
  for (const std::string& line : corral::fuzz::split(text, '\n')) {
    if (names_a_file(line) || line.find('\0') != std::string::npos) continue;
    const std::size_t eq = line.find('=');
    if (line.rfind("CORRAL_", 0) == 0 && eq != std::string::npos) {
      env[line.substr(0, eq)] = line.substr(eq + 1);
    } else {
      args.push_back(line);
    }
  }

  CLI::App app;
  corral::daemon::SettingsParser parser(app);
  std::vector<const char*> argv{"corral"};
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError&) {
    return 0;
  }
  std::vector<std::string> errors;
  const std::optional<corral::daemon::Settings> settings =
      parser.parse(errors, [&](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      });
  (void)corral::daemon::describe_non_defaults(parser.provenance());
  if (!settings) {
    if (errors.empty()) fail("refused settings without a reason");
    for (const std::string& e : errors) {
      if (e.find('\n') != std::string::npos) fail("an error of more than one line", e);
    }
    return 0;
  }
  (void)corral::daemon::to_server_options(*settings);
  (void)corral::daemon::to_mcp_options(*settings);
  std::vector<std::string> names;
  for (const auto& [name, value] : env) names.push_back(name);
  (void)corral::daemon::unknown_variable_warnings(names);
  return 0;
}
