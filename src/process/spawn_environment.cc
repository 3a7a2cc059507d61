// src/process/spawn_environment.cc: what a command starts with besides its
// arguments: the environment its hardening gives it (never CORRAL_*), and
// the executable its argv[0] names (see spawn.hpp).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <set>
#include <string_view>

#include "process/spawn.hpp"

extern char** environ;

namespace corral::process {

namespace {

constexpr const char* kDefaultPath = "PATH=/usr/local/bin:/usr/bin:/bin";

bool is_corral_variable(std::string_view name) { return name.rfind("CORRAL_", 0) == 0; }

bool is_executable_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::vector<std::string> command_environment(const Hardening& hardening) {
  std::vector<std::string> out;
  std::set<std::string> overridden;
  for (const auto& [name, value] : hardening.environment_set) overridden.insert(name);
  auto keep = [&](std::string_view name) {
    if (is_corral_variable(name) || overridden.count(std::string(name)) != 0) return false;
    if (!hardening.environment_allow) return true;
    for (const auto& allowed : *hardening.environment_allow) {
      if (allowed == name) return true;
    }
    return false;
  };
  bool has_path = false;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    auto eq = text.find('=');
    if (eq == std::string_view::npos) continue;
    if (keep(text.substr(0, eq))) {
      out.emplace_back(text);
      has_path = has_path || text.substr(0, eq) == "PATH";
    }
  }
  for (const auto& [name, value] : hardening.environment_set) {
    if (is_corral_variable(name)) continue;
    out.push_back(name + "=" + value);
    has_path = has_path || name == "PATH";
  }
  if (!has_path && hardening.environment_allow) out.emplace_back(kDefaultPath);
  return out;
}

std::string resolve_executable(const Command& command) {
  if (command.argv.empty() || command.argv[0].empty()) {
    throw SpawnError("the command has no program");
  }
  const std::string& name = command.argv[0];
  if (name.find('/') != std::string::npos) {
    std::string path = name;
    if (name[0] != '/' && command.hardening.working_directory) {
      path = *command.hardening.working_directory + "/" + name;
    }
    if (!is_executable_file(path)) throw SpawnError("not an executable file: " + path);
    return name;  // exec resolves relative paths after chdir, as the check did
  }
  const char* env_path = std::getenv("PATH");
  std::string search = env_path != nullptr ? env_path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= search.size()) {
    size_t end = search.find(':', start);
    if (end == std::string::npos) end = search.size();
    std::string dir = search.substr(start, end - start);
    if (!dir.empty()) {
      std::string candidate = dir + "/" + name;
      if (is_executable_file(candidate)) return candidate;
    }
    start = end + 1;
  }
  throw SpawnError("not found in PATH: " + name);
}

}  // namespace corral::process
