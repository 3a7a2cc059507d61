// src/daemon/settings.hpp: every setting of `corral serve`, declared once.
//
// Each setting has a flag (--max-queue; a boolean also --no-metrics), an
// environment variable (CORRAL_MAX_QUEUE), a type shown in --help (INT,
// DURATION, SIZE, BOOL, ...), a description, a default and a validation. A flag beats
// the variable and the variable beats the default; the daemon remembers where
// each value came from (`corral check` and /__config__ print it).
// Validation reports every problem at once, one line each, naming both
// spellings: "--max-queue or CORRAL_MAX_QUEUE: must be at least 1".
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/variables.hpp"
#include "corral/mcp.hpp"
#include "corral/server.hpp"

namespace corral::daemon {

using Milliseconds = std::chrono::milliseconds;

enum class LogFormat { text, json };

// Settings: the values in force.
struct Settings {
  std::string host = "127.0.0.1";
  std::uint16_t port = 8080;
  std::string socket_path;  // replaces host and port when set
  std::size_t workers = 0;  // 0 until resolved: the number of cores
  std::size_t executions_per_worker = 1;
  std::size_t max_queue = 100;
  std::uint64_t retire_after_executions = 10'000;
  std::uint64_t retire_on_growth = std::uint64_t{64} << 20;  // 0: never by growth
  Milliseconds default_timeout{30'000};
  Milliseconds max_timeout{300'000};
  std::uint64_t memory_limit = std::uint64_t{64} << 20;
  std::uint64_t response_limit = std::uint64_t{16} << 20;
  Milliseconds max_connection_age{0};                       // 0: no limit
  Milliseconds ping_interval{30'000};                       // 0: no pings
  std::uint64_t max_connections = 1024;                     // 0: no cap
  std::uint64_t max_connections_per_address = 0;            // 0: no cap
  std::uint64_t max_write_queue = std::uint64_t{32} << 20;  // bytes queued before reading pauses
  std::uint64_t max_runs_per_connection = 16;               // 0: no cap
  std::uint64_t max_runs_per_identity = 64;                 // 0: no cap
  Milliseconds header_timeout{10'000};
  Milliseconds idle_timeout{30'000};
  Milliseconds keep_alive_timeout{72'000};
  Milliseconds grace{250};  // margin past a run's timeout (BENCHMARKS.md)
  Milliseconds shutdown_delay{0};
  Milliseconds shutdown_grace{30'000};
  std::string auth_token;
  std::string auth_token_file;
  // Without a token, a host beyond loopback is refused unless this is set.
  bool allow_unauthenticated = false;
  std::string admin_host = "127.0.0.1";
  std::uint16_t admin_port = 8081;
  bool admin = true;
  // The request guard's allow-lists, for every listener (docs/security.md).
  std::vector<std::string> allowed_origins;  // besides loopback origins
  std::vector<std::string> allowed_hosts;    // besides loopback hosts
  bool metrics = true;
  std::string log_level = "info";
  LogFormat log_format = LogFormat::text;
  // The program a worker runs as (`PROGRAM worker`). bin/corral fills an
  // empty one with corral-engine (apps/corral/engine_path.hpp); left empty,
  // the pool starts this executable (pool::default_worker_command).
  std::string worker;
  // MCP (docs/mcp.md): `corral mcp` and /mcp on the executor port.
  bool mcp = true;                         // serve /mcp on the executor port
  std::vector<std::string> mcp_manifests;  // bound command manifests
  std::vector<std::string> mcp_approve;    // functions code mode asks the user about
  std::string mcp_mode = "direct";         // direct or compact
  std::string mcp_upstreams;               // JSON object (or a file of one), validated
  std::uint64_t mcp_result_budget = std::uint64_t{64} << 10;
  // What cuts dropped, kept as MCP resources: bytes (0: none) and age.
  std::uint64_t mcp_result_retention_bytes = std::uint64_t{64} << 20;
  Milliseconds mcp_result_retention{600'000};  // 10 minutes
  std::size_t mcp_max_sessions = 100;
  Milliseconds mcp_session_idle{900'000};  // 15 minutes
};

enum class Source { default_value, environment, flag };
std::string_view to_string(Source source) noexcept;

// Provenance of one setting, for check and /__config__.
struct Provenance {
  std::string flag;   // "--max-queue"
  std::string env;    // "CORRAL_MAX_QUEUE"
  std::string value;  // as in force (secrets redacted)
  Source source = Source::default_value;
  bool secret = false;
};

// Declares every setting's flag on `command`. Call parse() after CLI11 has
// parsed the command line.
class SettingsParser {
 public:
  explicit SettingsParser(CLI::App& command);

  // Reads flags, then the environment (through `getenv`, so tests can give
  // their own), then defaults; validates everything. Returns the settings,
  // or fills `errors` (every problem, one line each) and returns nullopt.
  std::optional<Settings> parse(
      std::vector<std::string>& errors,
      const std::function<const char*(const char*)>& getenv = ::getenv) const;

  // Where each value came from, in declaration order (valid after parse).
  const std::vector<Provenance>& provenance() const noexcept { return provenance_; }

  // Every setting's environment variable, in declaration order.
  std::vector<std::string> variables() const;

  struct Declaration;

 private:
  CLI::App& command_;
  std::vector<std::shared_ptr<Declaration>> declarations_;
  mutable std::vector<Provenance> provenance_;
};

// The warnings for misspelt CORRAL_ variables (core/variables.hpp).
using core::environment_names;
using core::unknown_variable_warnings;

// "--max-workers is 1, from the flag." one line each for the settings away
// from their default, or "Every setting is at its default.".
// What a daemon that listens (`serve`, `check`) refuses beyond parse():
// serving without a token on an address other machines reach, and an admin
// listener (which checks no token) there, unless allow_unauthenticated.
// Each line names the setting, as parse()'s errors do.
std::vector<std::string> listening_errors(const Settings& settings);

std::vector<std::string> describe_non_defaults(const std::vector<Provenance>& provenance);

// The one translation from settings to the server's options. The drain is
// derived: shutdown grace - shutdown delay - the pool's kill spacing - one
// second for the admin listener and the log flush, never below zero.
server::Options to_server_options(const Settings& settings);

// The identity hook the settings ask for: a shared bearer token, a file of
// tokens (one a line; '#' starts a comment), or none (every caller is
// "anonymous"). Throws std::runtime_error when the token file can't be read.
server::IdentityHook make_identity_hook(const Settings& settings);

// The MCP service's options the settings ask for (manifests, mode, upstreams,
// result budget, run bounds as for the executor).
mcp::Options to_mcp_options(const Settings& settings);

}  // namespace corral::daemon
