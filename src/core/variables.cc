#include "core/variables.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <iterator>
#include <limits>

#include "core/units.hpp"

namespace corral::core {

namespace {

// Every setting's variable (src/daemon/settings.cc declares them;
// tests/daemon/settings_test.cc holds the two lists equal).
const std::string_view kSettingVariables[] = {
    "CORRAL_HOST",
    "CORRAL_PORT",
    "CORRAL_SOCKET",
    "CORRAL_MAX_WORKERS",
    "CORRAL_EXECUTIONS_PER_WORKER",
    "CORRAL_MAX_QUEUE",
    "CORRAL_RETIRE_AFTER",
    "CORRAL_RETIRE_ON_GROWTH",
    "CORRAL_TIMEOUT",
    "CORRAL_MAX_TIMEOUT",
    "CORRAL_MEMORY_LIMIT",
    "CORRAL_RESPONSE_LIMIT",
    "CORRAL_MAX_CONNECTION_AGE",
    "CORRAL_PING_INTERVAL",
    "CORRAL_MAX_CONNECTIONS",
    "CORRAL_MAX_CONNECTIONS_PER_ADDRESS",
    "CORRAL_MAX_WRITE_QUEUE",
    "CORRAL_MAX_RUNS_PER_CONNECTION",
    "CORRAL_MAX_RUNS_PER_IDENTITY",
    "CORRAL_HEADER_TIMEOUT",
    "CORRAL_IDLE_TIMEOUT",
    "CORRAL_KEEP_ALIVE_TIMEOUT",
    "CORRAL_GRACE",
    "CORRAL_SHUTDOWN_DELAY",
    "CORRAL_SHUTDOWN_GRACE",
    "CORRAL_AUTH_TOKEN",
    "CORRAL_AUTH_TOKEN_FILE",
    "CORRAL_ALLOW_UNAUTHENTICATED",
    "CORRAL_ADMIN_HOST",
    "CORRAL_ADMIN_PORT",
    "CORRAL_ADMIN",
    "CORRAL_ALLOWED_ORIGINS",
    "CORRAL_ALLOWED_HOSTS",
    "CORRAL_METRICS",
    "CORRAL_LOG_LEVEL",
    "CORRAL_LOG_FORMAT",
    "CORRAL_WORKER",
    "CORRAL_MCP",
    "CORRAL_MCP_MANIFEST",
    "CORRAL_MCP_MODE",
    "CORRAL_MCP_APPROVE",
    "CORRAL_MCP_UPSTREAM",
    "CORRAL_MCP_RESULT_BUDGET",
    "CORRAL_MCP_RESULT_RETENTION_BYTES",
    "CORRAL_MCP_RESULT_RETENTION",
    "CORRAL_MCP_MAX_SESSIONS",
    "CORRAL_MCP_SESSION_IDLE",
};

// CORRAL_ variables that are no setting but are read by corral's build and
// test tools (so a developer's shell is not warned at every start), or name
// a program's path.
const std::string_view kToolVariables[] = {
    "CORRAL_WERROR",           // CMake: the default of -DCORRAL_WERROR
    "CORRAL_SKIP_SANITIZERS",  // scripts/test
    "CORRAL_BINARY",           // tests/e2e: the corral under test
    "CORRAL_TEST_SERVER",      // tests/e2e: the test executor server
    "CORRAL_WORKLOADS_JSON",   // bench/peers
    "CORRAL_RUBY_HELPER",      // where Ruby guests' helper is (docs/ruby.md)
};

// Edit distance (insertions, deletions, substitutions), for suggestions.
std::size_t distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::span<const std::string_view> setting_variables() { return kSettingVariables; }

std::vector<std::string> unknown_variable_warnings(const std::vector<std::string>& names) {
  const auto& settings = kSettingVariables;
  std::vector<std::string> warnings;
  constexpr std::string_view kPrefix = "CORRAL_";
  for (const std::string& name : names) {
    if (name.size() <= kPrefix.size() || name.compare(0, kPrefix.size(), kPrefix) != 0) continue;
    if (std::find(std::begin(settings), std::end(settings), name) != std::end(settings)) continue;
    if (std::find(std::begin(kToolVariables), std::end(kToolVariables), name) !=
        std::end(kToolVariables))
      continue;
    // The settings it may have meant: the closest typo (at most a third of
    // the letters wrong; ties all named) and any longer name it is part of
    // (CORRAL_WORKERS for CORRAL_MAX_WORKERS); the closest first, three at
    // most.
    const std::string_view given = std::string_view(name).substr(kPrefix.size());
    std::vector<std::pair<std::size_t, std::string>> close;
    std::size_t best = std::numeric_limits<std::size_t>::max();
    for (std::string_view setting : settings) {
      const std::string_view candidate = std::string_view(setting).substr(kPrefix.size());
      const std::size_t d = distance(given, candidate);
      const std::size_t typo =
          std::max<std::size_t>(2, std::min(given.size(), candidate.size()) / 3);
      const bool part = candidate.find(given) != std::string_view::npos;
      if (d <= typo || part) close.emplace_back(d, std::string(setting));
      if (d <= typo) best = std::min(best, d);
    }
    std::erase_if(close, [&](const auto& c) {
      const std::string_view candidate = std::string_view(c.second).substr(kPrefix.size());
      return c.first != best && candidate.find(given) == std::string_view::npos;
    });
    std::stable_sort(close.begin(), close.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    if (close.size() > 3) close.resize(3);
    const bool plain = std::all_of(name.begin(), name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
    std::string warning = (plain ? name : quoted(name)) + " names no setting; it is ignored";
    for (std::size_t i = 0; i < close.size(); ++i) {
      warning += i == 0 ? " (did you mean " : i + 1 == close.size() ? " or " : ", ";
      warning += close[i].second;
    }
    if (!close.empty()) warning += "?)";
    warnings.push_back(std::move(warning));
  }
  return warnings;
}

std::vector<std::string> environment_names(char** env) {
  std::vector<std::string> names;
  for (char** e = env; e && *e; ++e) {
    const char* equals = std::strchr(*e, '=');
    names.emplace_back(*e, equals ? static_cast<std::size_t>(equals - *e) : std::strlen(*e));
  }
  return names;
}

}  // namespace corral::core
