#include "core/companion.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <vector>

namespace corral::core {

namespace {

bool executable(const std::string& path) {
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

std::string real(const std::string& path) {
  char buffer[PATH_MAX];
  return ::realpath(path.c_str(), buffer) ? std::string(buffer) : std::string();
}

}  // namespace

std::string self_executable() {
  char buffer[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
}

std::string find_companion(const Companion& companion, std::string& error) {
  const std::string program = companion.program;
  if (companion.override_var) {
    if (const char* forced = std::getenv(companion.override_var); forced && *forced) {
      if (executable(forced)) return forced;
      error = std::string(companion.override_var) + "=" + forced + " is not an executable file";
      return {};
    }
  }
  std::vector<std::string> tried;
  auto found = [&](const std::string& path) {
    if (executable(path)) return true;
    tried.push_back(path);
    return false;
  };
  const std::string exe = self_executable();
  const std::string dir = exe.empty() ? std::string() : exe.substr(0, exe.rfind('/'));
  if (!dir.empty()) {
    if (std::string p = dir + "/" + program; found(p)) return p;
    if (std::string p = dir + "/../libexec/corral/" + program; found(p)) return p;
  }
  const std::string build_dir = companion.build_dir ? real(companion.build_dir) : std::string();
  if (!build_dir.empty() && companion.build_path && real(exe).rfind(build_dir + "/", 0) == 0) {
    if (std::string p = companion.build_path; found(p)) return p;
  }
  if (companion.install_path && *companion.install_path) {
    if (std::string p = companion.install_path; found(p)) return p;
  }
  error = "the program " + program + " was not found (looked for";
  for (const std::string& path : tried) error += " " + path;
  if (companion.override_var)
    error += std::string("; set ") + companion.override_var + " to its path";
  error += ")";
  return {};
}

}  // namespace corral::core
