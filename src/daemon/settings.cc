#include "daemon/settings.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "core/units.hpp"
#include "daemon/tokens.hpp"
#include "server/request_guard.hpp"

namespace corral::daemon {

std::string_view to_string(Source source) noexcept {
  switch (source) {
    case Source::default_value:
      return "default";
    case Source::environment:
      return "environment";
    case Source::flag:
      return "flag";
  }
  return "default";
}

namespace {

// Whether a listener on `host` (or on the unix socket `socket_path`, when
// set) can be reached from other machines: a wildcard or non-loopback
// address, or a host name other than localhost.
bool reachable_beyond_loopback(const std::string& host, const std::string& socket_path) {
  if (!socket_path.empty()) return false;
  using Scope = server::RequestGuard::Scope;
  switch (server::RequestGuard::scope_of(host)) {
    case Scope::loopback:
      return false;
    case Scope::wildcard:
    case Scope::network:
      return true;
    case Scope::local_socket: {  // not an address: a name, loopback as the request guard reads it
      const std::optional<server::Authority> name = server::parse_authority(host);
      return !(name && name->kind == server::Authority::Kind::name && !name->port &&
               name->loopback);
    }
  }
  return true;
}

using Apply = std::function<void(const std::string& text, const std::string& what, Settings&)>;

// How a setting reads its text, and the type `--help` shows for it.
struct Kind {
  Apply apply;
  std::string type;
  bool boolean = false;  // also a switch: --metrics, --no-metrics
};

// Whole numbers: at least `min`.
template <typename T>
Kind count(T Settings::*field, std::uint64_t min) {
  return {
      [field, min](const std::string& text, const std::string& what, Settings& s) {
        const auto max = static_cast<std::uint64_t>(std::numeric_limits<T>::max());
        std::uint64_t value = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec == std::errc::result_out_of_range || (ec == std::errc() && value > max))
          throw std::invalid_argument(what + ": must be at most " + std::to_string(max));
        if (ec != std::errc() || end != text.data() + text.size())
          throw std::invalid_argument(what + ": " + core::quoted(text) + " is not a whole number");
        if (value < min)
          throw std::invalid_argument(what + ": must be at least " + std::to_string(min));
        s.*field = static_cast<T>(value);
      },
      "INT"};
}

Kind port(std::uint16_t Settings::*field) {
  return {[field](const std::string& text, const std::string& what, Settings& s) {
            unsigned value = 0;
            const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
            if (ec != std::errc() || end != text.data() + text.size() || value > 65535)
              throw std::invalid_argument(what + ": " + core::quoted(text) +
                                          " is not a port (0 to 65535)");
            s.*field = static_cast<std::uint16_t>(value);
          },
          "PORT"};
}

// Sizes: at least 1 byte; `zero_disables` also accepts "0" (or "off").
Kind size(std::uint64_t Settings::*field, bool zero_disables = false) {
  return {[field, zero_disables](const std::string& text, const std::string& what, Settings& s) {
            if (zero_disables && (text == "0" || text == "off")) {
              s.*field = 0;
              return;
            }
            const std::optional<std::uint64_t> bytes = core::parse_size(text, what);
            if (!bytes) throw std::invalid_argument(what + ": must be a size, not \"none\"");
            s.*field = *bytes;
          },
          "SIZE"};
}

// Durations: at least 1 ms and no wider than the widest supported timeout;
// `zero_disables` also accepts "0".
Kind duration(Milliseconds Settings::*field, bool zero_disables) {
  return {[field, zero_disables](const std::string& text, const std::string& what, Settings& s) {
            if (zero_disables && (text == "0" || text == "none" || text == "off")) {
              s.*field = Milliseconds(0);
              return;
            }
            const std::optional<Milliseconds> d = core::parse_duration(text, what);
            if (!d) throw std::invalid_argument(what + ": must be a duration, not \"none\"");
            // parse_duration refuses anything wider than kMaxDuration.
            static_assert(core::kMaxDuration == server::kMaxSupportedTimeout);
            s.*field = *d;
          },
          "DURATION"};
}

Kind text(std::string Settings::*field, std::string type) {
  return {[field](const std::string& text, const std::string&, Settings& s) { s.*field = text; },
          std::move(type)};
}

// Comma-separated list; empty items are dropped.
Kind list(std::vector<std::string> Settings::*field, std::string type) {
  return {[field](const std::string& text, const std::string&, Settings& s) {
            std::vector<std::string> items;
            std::size_t at = 0;
            while (at <= text.size()) {
              const std::size_t comma = std::min(text.find(',', at), text.size());
              std::string item = text.substr(at, comma - at);
              const auto first = item.find_first_not_of(" \t");
              const auto last = item.find_last_not_of(" \t");
              if (first != std::string::npos) items.push_back(item.substr(first, last - first + 1));
              at = comma + 1;
            }
            s.*field = std::move(items);
          },
          std::move(type)};
}

// A list of allowed origins or hosts, each checked as the request guard
// will read it.
Kind guard_list(std::vector<std::string> Settings::*field, std::string type) {
  Kind items = list(field, std::move(type));
  items.apply = [field, parse = items.apply](const std::string& text, const std::string& what,
                                             Settings& s) {
    parse(text, what, s);
    server::GuardPolicy policy;
    (field == &Settings::allowed_origins ? policy.allowed_origins : policy.allowed_hosts) =
        s.*field;
    try {
      server::validate(policy);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(what + ": " + e.what());
    }
  };
  return items;
}

Kind boolean(bool Settings::*field) {
  return {[field](const std::string& text, const std::string& what, Settings& s) {
            static const std::set<std::string> yes = {"1", "true", "yes", "on"};
            static const std::set<std::string> no = {"0", "false", "no", "off"};
            if (yes.contains(text)) {
              s.*field = true;
            } else if (no.contains(text)) {
              s.*field = false;
            } else {
              throw std::invalid_argument(what + ": " + core::quoted(text) +
                                          " is not true or false (also 1/0, yes/no, on/off)");
            }
          },
          "BOOL", true};
}

Kind one_of(std::string Settings::*field, std::vector<std::string> allowed) {
  std::string type;
  for (const auto& a : allowed) type += (type.empty() ? "" : "|") + a;
  return {[field, allowed](const std::string& text, const std::string& what, Settings& s) {
            if (std::find(allowed.begin(), allowed.end(), text) == allowed.end()) {
              std::string list;
              for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
              throw std::invalid_argument(what + ": must be one of " + list);
            }
            s.*field = text;
          },
          std::move(type)};
}

// A default as the settings table shows it: "0" for off, else a duration
// the setting reads back.
std::string format_ms(Milliseconds ms) { return ms.count() == 0 ? "0" : core::format_duration(ms); }

}  // namespace

struct SettingsParser::Declaration {
  std::string name;  // without dashes: "max-queue"
  std::string description;
  std::string default_text;
  Apply apply;
  bool secret = false;
  std::string value;  // what CLI11 stored
  CLI::Option* option = nullptr;
  CLI::Option* negated = nullptr;  // --no-NAME, for a boolean

  std::string flag() const { return "--" + name; }
  std::string env() const {
    std::string e = "CORRAL_";
    for (char c : name) e += c == '-' ? '_' : static_cast<char>(std::toupper(c));
    return e;
  }
};

namespace {

using Declarations = std::vector<std::shared_ptr<SettingsParser::Declaration>>;

// Declares one setting: its flag on the command (and --no-NAME for a
// boolean), appended to `declarations` in the order --help and provenance
// show them.
class Declare {
 public:
  Declare(CLI::App& command, Declarations& declarations)
      : command_(command), declarations_(declarations) {}

  void operator()(std::string name, std::string description, std::string default_text, Kind kind,
                  bool secret = false) {
    auto decl = std::make_shared<SettingsParser::Declaration>();
    decl->name = std::move(name);
    decl->description = std::move(description);
    decl->default_text = std::move(default_text);
    decl->apply = std::move(kind.apply);
    decl->secret = secret;
    // The value stays text for CLI11: the setting's own parser reads it, so a
    // flag and its variable are refused alike, with the same message.
    decl->option = command_.add_option(
        decl->flag(), decl->value,
        decl->description + " [env: " + decl->env() + ", default: " + decl->default_text + "]");
    decl->option->group("Settings");
    if (kind.boolean) {
      // `--metrics` alone is true; `--metrics=false` and `--metrics false`
      // give a value (no setting command takes positional arguments, so the
      // next word can only be the value). `--no-metrics` takes none.
      decl->option->expected(0, 1)->default_str("true")->option_text("[" + kind.type + "]");
      decl->negated = command_.add_flag("--no-" + decl->name)
                          ->description("Same as " + decl->flag() + "=false")
                          ->disable_flag_override()
                          ->group("Settings");
    } else {
      decl->option->type_name(kind.type);
    }
    declarations_.push_back(std::move(decl));
  }

 private:
  CLI::App& command_;
  Declarations& declarations_;
};

Kind log_format() {
  return {[](const std::string& text, const std::string& what, Settings& s) {
            if (text == "text") {
              s.log_format = LogFormat::text;
            } else if (text == "json") {
              s.log_format = LogFormat::json;
            } else {
              throw std::invalid_argument(what + ": must be one of text, json");
            }
          },
          "text|json"};
}

// Checked here, so that a bad value is reported with the other settings'
// errors; kept as text, which to_mcp_options parses again.
Kind upstreams() {
  return {[](const std::string& text, const std::string& what, Settings& s) {
            try {
              mcp::parse_upstreams(text);
            } catch (const std::invalid_argument& e) {
              throw std::invalid_argument(what + ": " + e.what());
            }
            s.mcp_upstreams = text;
          },
          "JSON|FILE"};
}

Kind result_budget() {
  return {[](const std::string& text, const std::string& what, Settings& s) {
            size(&Settings::mcp_result_budget).apply(text, what, s);
            if (s.mcp_result_budget < 256)
              throw std::invalid_argument(what + ": must be at least 256B");
          },
          "SIZE"};
}

// Each group below declares its settings in --help order; `d` gives the
// defaults shown.

void declare_listener(Declare& add, const Settings& d) {
  add("host", "Address the executor listens on", d.host, text(&Settings::host, "ADDRESS"));
  add("port", "TCP port of the executor (0: any free port)", std::to_string(d.port),
      port(&Settings::port));
  add("socket", "Unix socket path instead of host and port", "",
      text(&Settings::socket_path, "PATH"));
}

void declare_pool(Declare& add, const Settings& d) {
  const std::string cores = std::to_string(std::max(1u, std::thread::hardware_concurrency()));
  add("max-workers", "Worker processes", cores, count(&Settings::workers, 1));
  add("executions-per-worker", "Concurrent executions inside one worker",
      std::to_string(d.executions_per_worker), count(&Settings::executions_per_worker, 1));
  add("max-queue", "Executions that may wait for a worker", std::to_string(d.max_queue),
      count(&Settings::max_queue, 1));
  add("retire-after", "Executions after which a worker is replaced",
      std::to_string(d.retire_after_executions), count(&Settings::retire_after_executions, 1));
  add("retire-on-growth",
      "Growth of a worker's private memory, from the least it held after a run, past which it is "
      "replaced (0: never)",
      "64MiB", size(&Settings::retire_on_growth, true));
}

void declare_run_bounds(Declare& add, const Settings& d) {
  add("timeout", "A run's timeout when the request names none", format_ms(d.default_timeout),
      duration(&Settings::default_timeout, false));
  add("max-timeout", "The widest timeout a request may ask for", format_ms(d.max_timeout),
      duration(&Settings::max_timeout, false));
  add("memory-limit", "Memory a run may allocate", "64MiB", size(&Settings::memory_limit));
  add("response-limit", "Largest result envelope sent to a caller", "16MiB",
      size(&Settings::response_limit));
}

void declare_connection_bounds(Declare& add, const Settings& d) {
  add("max-connection-age", "Close WebSocket connections older than this (0: never)", "0",
      duration(&Settings::max_connection_age, true));
  add("ping-interval", "Ping every socket this often; drop those that missed one (0: off)",
      format_ms(d.ping_interval), duration(&Settings::ping_interval, true));
  add("max-connections", "Connections open at once; more are refused with 503 (0: no cap)",
      std::to_string(d.max_connections), count(&Settings::max_connections, 0));
  add("max-connections-per-address",
      "Connections open at once from one remote address; more are refused with 503 (0: no cap)",
      std::to_string(d.max_connections_per_address),
      count(&Settings::max_connections_per_address, 0));
  add("max-write-queue",
      "Bytes queued for one WebSocket above which the executor stops reading it until it drains",
      "32MiB", size(&Settings::max_write_queue));
  add("max-runs-per-connection",
      "Runs in flight on one connection; more are answered busy (retryable) (0: no cap)",
      std::to_string(d.max_runs_per_connection), count(&Settings::max_runs_per_connection, 0));
  add("max-runs-per-identity",
      "Runs in flight for one caller identity (token name); more are answered busy (0: no cap)",
      std::to_string(d.max_runs_per_identity), count(&Settings::max_runs_per_identity, 0));
}

void declare_timeouts_and_shutdown(Declare& add, const Settings& d) {
  add("header-timeout", "A request head must be complete this long after it starts",
      format_ms(d.header_timeout), duration(&Settings::header_timeout, false));
  add("idle-timeout", "Reading a request body or writing a response must end within this",
      format_ms(d.idle_timeout), duration(&Settings::idle_timeout, false));
  add("keep-alive-timeout", "An idle keep-alive HTTP connection is closed after this",
      format_ms(d.keep_alive_timeout), duration(&Settings::keep_alive_timeout, false));
  add("grace", "Margin past a run's timeout before its worker is killed", format_ms(d.grace),
      duration(&Settings::grace, false));
  add("shutdown-delay", "On stop, keep accepting this long while readiness fails", "0",
      duration(&Settings::shutdown_delay, true));
  add("shutdown-grace", "The whole stop is bounded by this", format_ms(d.shutdown_grace),
      duration(&Settings::shutdown_grace, false));
}

void declare_access(Declare& add, const Settings& d) {
  add("auth-token", "Bearer token callers must present", "", text(&Settings::auth_token, "TOKEN"),
      true);
  add("auth-token-file", "File of bearer tokens, one a line", "",
      text(&Settings::auth_token_file, "FILE"));
  add("allow-unauthenticated",
      "Serve without a token on an address beyond loopback (refused otherwise)", "false",
      boolean(&Settings::allow_unauthenticated));
  add("admin-host", "Address of the admin listener", d.admin_host,
      text(&Settings::admin_host, "ADDRESS"));
  add("admin-port", "Port of the admin listener (0: any free port)", std::to_string(d.admin_port),
      port(&Settings::admin_port));
  add("admin", "Serve the admin listener", "true", boolean(&Settings::admin));
  // One allow-list for every HTTP surface: executor, probes, /mcp, admin.
  add("allowed-origins",
      "Browser origins (scheme://host[:port]) allowed besides loopback ones, on every listener "
      "(comma-separated; * allows all)",
      "", guard_list(&Settings::allowed_origins, "ORIGIN,..."));
  add("allowed-hosts",
      "Host header names (host[:port]) allowed besides loopback ones, on every listener "
      "(comma-separated; * allows all)",
      "", guard_list(&Settings::allowed_hosts, "HOST,..."));
}

void declare_metrics_logging_and_worker(Declare& add, const Settings& d) {
  add("metrics", "Serve /metrics and count", "true", boolean(&Settings::metrics));
  add("log-level", "debug, info, warn or error", d.log_level,
      one_of(&Settings::log_level, {"debug", "info", "warn", "error"}));
  add("log-format", "text or json (one JSON object a line)", "text", log_format());
  add("worker", "Program started as `PROGRAM worker` for each worker", "corral-engine",
      text(&Settings::worker, "PROGRAM"));
}

void declare_mcp(Declare& add, const Settings& d) {
  add("mcp", "Serve MCP (Streamable HTTP) at /mcp on the executor port", "true",
      boolean(&Settings::mcp));
  add("mcp-manifest", "Command manifests whose commands become MCP tools (comma-separated)", "",
      list(&Settings::mcp_manifests, "FILE,..."));
  add("mcp-mode",
      "direct (a tool per command) or compact (search_tools, get_tool_details, "
      "call_tool; code finds functions with codemode.search and codemode.describe)",
      d.mcp_mode, one_of(&Settings::mcp_mode, {"direct", "compact"}));
  add("mcp-approve",
      "Functions code mode runs only after the user approves (MCP elicitation), besides commands "
      "and upstream tools annotated destructiveHint: command tool names or SERVER.TOOL "
      "(comma-separated)",
      "", list(&Settings::mcp_approve, "NAME,..."));
  add("mcp-upstream",
      "Upstream MCP servers for code mode: JSON {\"NAME\": {\"command\": [..]} or "
      "{\"url\": \"http://..\"}}, or a file of it",
      "", upstreams());
  add("mcp-result-budget", "Largest MCP tool result text; larger ones are cut and say so", "64KiB",
      result_budget());
  add("mcp-result-retention-bytes",
      "What result cuts drop is kept whole as MCP resources, this many bytes in all (0: none)",
      "64MiB", size(&Settings::mcp_result_retention_bytes, true));
  add("mcp-result-retention", "How long a kept result stays readable (resources/read)", "10m",
      duration(&Settings::mcp_result_retention, false));
  add("mcp-max-sessions", "Open MCP sessions at once on /mcp", std::to_string(d.mcp_max_sessions),
      count(&Settings::mcp_max_sessions, 1));
  add("mcp-session-idle", "An MCP session idle this long is ended", "15m",
      duration(&Settings::mcp_session_idle, false));
}

}  // namespace

SettingsParser::SettingsParser(CLI::App& command) : command_(command) {
  const Settings d;
  Declare add(command_, declarations_);
  declare_listener(add, d);
  declare_pool(add, d);
  declare_run_bounds(add, d);
  declare_connection_bounds(add, d);
  declare_timeouts_and_shutdown(add, d);
  declare_access(add, d);
  declare_metrics_logging_and_worker(add, d);
  declare_mcp(add, d);
}

std::optional<Settings> SettingsParser::parse(
    std::vector<std::string>& errors, const std::function<const char*(const char*)>& getenv) const {
  Settings settings;
  provenance_.clear();
  for (const auto& decl : declarations_) {
    Provenance p{decl->flag(), decl->env(), decl->default_text, Source::default_value,
                 decl->secret};
    std::optional<std::string> given;
    if (decl->negated && decl->negated->count() > 0) {
      if (decl->option->count() > 0) {
        errors.push_back(decl->flag() + " or " + decl->env() + ": give " + decl->flag() +
                         " or --no-" + decl->name + ", not both");
      }
      given = "false";
      p.source = Source::flag;
    } else if (decl->option->count() > 0) {
      given = decl->value;
      p.source = Source::flag;
    } else if (const char* env = getenv(decl->env().c_str()); env && *env) {
      given = std::string(env);
      p.source = Source::environment;
    }
    if (given) {
      try {
        decl->apply(*given, decl->flag() + " or " + decl->env(), settings);
        p.value = *given;
      } catch (const std::invalid_argument& e) {
        // The unit parsers offer "none"; no daemon setting takes it.
        std::string message = e.what();
        const std::string zero = "must be greater than zero (or \"none\")";
        if (auto at = message.find(zero); at != std::string::npos)
          message.replace(at, zero.size(), "must be at least 1");
        errors.push_back(std::move(message));
      }
    }
    if (p.secret && !p.value.empty()) p.value = "(redacted)";
    provenance_.push_back(std::move(p));
  }
  // Rules that tie two settings together.
  if (settings.shutdown_delay >= settings.shutdown_grace) {
    errors.push_back(
        "--shutdown-delay or CORRAL_SHUTDOWN_DELAY: must be smaller than --shutdown-grace "
        "(the delay is spent inside the grace)");
  }
  if (settings.default_timeout > settings.max_timeout) {
    errors.push_back("--timeout or CORRAL_TIMEOUT: must not be wider than --max-timeout");
  }
  if (!settings.auth_token.empty() && !settings.auth_token_file.empty()) {
    errors.push_back("--auth-token or CORRAL_AUTH_TOKEN: give a token or a token file, not both");
  }
  if (!errors.empty()) return std::nullopt;
  if (settings.workers == 0) settings.workers = std::max(1u, std::thread::hardware_concurrency());
  return settings;
}

std::vector<std::string> listening_errors(const Settings& settings) {
  std::vector<std::string> errors;
  if (settings.allow_unauthenticated) return errors;
  // Deny by default: an executor other machines can reach runs their code,
  // so it needs a token unless its operator says, in so many words, that it
  // is open (a pod behind its own authenticating proxy, say).
  if (settings.auth_token.empty() && settings.auth_token_file.empty() &&
      reachable_beyond_loopback(settings.host, settings.socket_path)) {
    errors.push_back("--host or CORRAL_HOST: " + settings.host +
                     " is reachable beyond loopback and no --auth-token or --auth-token-file "
                     "(CORRAL_AUTH_TOKEN, CORRAL_AUTH_TOKEN_FILE) is set: give one, or set "
                     "--allow-unauthenticated (CORRAL_ALLOW_UNAUTHENTICATED=true) to serve "
                     "without");
  }
  // The admin listener checks no token at all (maintenance, config).
  if (settings.admin && reachable_beyond_loopback(settings.admin_host, "")) {
    errors.push_back("--admin-host or CORRAL_ADMIN_HOST: " + settings.admin_host +
                     " is reachable beyond loopback and the admin listener checks no token: "
                     "keep it on loopback (reach it with kubectl exec or an SSH tunnel), or set "
                     "--allow-unauthenticated (CORRAL_ALLOW_UNAUTHENTICATED=true)");
  }
  return errors;
}

std::vector<std::string> SettingsParser::variables() const {
  std::vector<std::string> names;
  for (const auto& decl : declarations_) names.push_back(decl->env());
  return names;
}

std::vector<std::string> describe_non_defaults(const std::vector<Provenance>& provenance) {
  std::vector<std::string> lines;
  for (const Provenance& p : provenance) {
    if (p.source == Source::default_value) continue;
    lines.push_back(p.flag + " is " + p.value + ", from the " +
                    (p.source == Source::flag ? "flag" : "environment") + ".");
  }
  if (lines.empty()) lines.push_back("Every setting is at its default.");
  return lines;
}

server::Options to_server_options(const Settings& settings) {
  server::Options options;
  options.host = settings.host;
  options.port = settings.port;
  options.socket_path = settings.socket_path;
  options.pool.max_workers = settings.workers;
  options.pool.executions_per_worker = settings.executions_per_worker;
  options.pool.max_queue = settings.max_queue;
  options.pool.retire_after_executions = settings.retire_after_executions;
  options.pool.retire_on_growth = settings.retire_on_growth;
  options.pool.grace = settings.grace;
  // Room under the kernel's ceiling for every run a worker holds at its
  // limit twice over (the engine's copies), past the 4 GiB default.
  const std::uint64_t runs_at_their_limit =
      2 * settings.memory_limit * std::max<std::uint64_t>(1, settings.executions_per_worker);
  options.pool.worker_memory_ceiling =
      std::max(options.pool.worker_memory_ceiling, runs_at_their_limit + (std::uint64_t{1} << 30));
  options.pool.instrumented = settings.metrics;
  if (!settings.worker.empty()) options.pool.worker_command = {settings.worker, "worker"};
  options.default_timeout = settings.default_timeout;
  options.max_timeout = settings.max_timeout;
  options.run_limits.memory_limit = settings.memory_limit;
  options.response_limit = settings.response_limit;
  if (settings.max_connection_age.count() > 0)
    options.max_connection_age = settings.max_connection_age;
  options.ping_interval = settings.ping_interval;
  options.max_connections = settings.max_connections;
  options.max_connections_per_address = settings.max_connections_per_address;
  options.max_write_queue = static_cast<std::size_t>(settings.max_write_queue);
  options.max_runs_per_connection = static_cast<std::size_t>(settings.max_runs_per_connection);
  options.max_runs_per_identity = static_cast<std::size_t>(settings.max_runs_per_identity);
  options.headers_timeout = settings.header_timeout;
  options.idle_timeout = settings.idle_timeout;
  options.keep_alive_timeout = settings.keep_alive_timeout;
  options.shutdown_delay = settings.shutdown_delay;
  // The drain: what is left of the grace after the delay, the pool's kill
  // spacing, and a second for the admin listener and the log flush.
  const auto kill_spacing =
      std::chrono::duration_cast<Milliseconds>(options.pool.termination_delay);
  const Milliseconds drain =
      settings.shutdown_grace - settings.shutdown_delay - kill_spacing - Milliseconds(1000);
  options.shutdown_drain = std::max(drain, Milliseconds(0));
  options.instrumented = settings.metrics;
  if (settings.metrics) options.metrics = server::own_metrics();
  options.identify = make_identity_hook(settings);
  options.allowed_origins = settings.allowed_origins;
  options.allowed_hosts = settings.allowed_hosts;
  return options;
}

mcp::Options to_mcp_options(const Settings& settings) {
  mcp::Options options;
  options.manifests = settings.mcp_manifests;
  options.mode = settings.mcp_mode == "compact" ? mcp::Mode::compact : mcp::Mode::direct;
  options.upstreams = mcp::parse_upstreams(settings.mcp_upstreams);
  options.approve = settings.mcp_approve;
  options.result_budget = settings.mcp_result_budget;
  options.result_retention_bytes = settings.mcp_result_retention_bytes;
  options.result_retention = settings.mcp_result_retention;
  options.default_timeout = settings.default_timeout;
  options.max_timeout = settings.max_timeout;
  options.run_limits.memory_limit = settings.memory_limit;
  return options;
}

server::IdentityHook make_identity_hook(const Settings& settings) {
  std::vector<std::string> tokens;
  if (!settings.auth_token.empty()) tokens.push_back(settings.auth_token);
  if (!settings.auth_token_file.empty()) tokens = read_token_file(settings.auth_token_file);
  if (tokens.empty()) {
    return server::sync_identity(
        [](const server::Handshake&) { return server::Decision::admit("anonymous"); });
  }
  return bearer_identity(std::make_shared<const TokenSet>(std::move(tokens)));
}

}  // namespace corral::daemon
