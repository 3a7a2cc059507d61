// `corral serve`: the daemon. `corral check`: can this machine serve?
// `corral status` / `corral maintenance`: ask a running daemon.
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <iostream>
#include <system_error>
#include <thread>

#include "core/json.hpp"
#include "corral/process.hpp"
#include "daemon/admin.hpp"
#include "daemon/check.hpp"
#include "daemon/daemon.hpp"
#include "daemon/log.hpp"
#include "daemon/settings.hpp"
#include "pool/lockdown.hpp"
#include "subcommands.hpp"

extern char** environ;

namespace corral::app {

namespace json = core::json;

std::vector<std::string> environment_warnings() {
  return daemon::unknown_variable_warnings(daemon::environment_names(environ));
}

void print_warnings(const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings) std::fprintf(stderr, "corral: warning: %s\n", w.c_str());
}

std::optional<daemon::Settings> parse_settings(const daemon::SettingsParser& parser,
                                               std::vector<std::string>& warnings) {
  warnings = environment_warnings();
  std::vector<std::string> errors;
  std::optional<daemon::Settings> settings = parser.parse(errors);
  if (!settings) {
    // No log yet: the warnings go with the errors (a mistyped variable may
    // be why a setting is at a value that was refused).
    print_warnings(warnings);
    warnings.clear();
  }
  for (const std::string& e : errors) std::fprintf(stderr, "corral: %s\n", e.c_str());
  return settings;
}

namespace {

// SIGTERM, SIGINT and SIGHUP are taken by sigwait on the main thread; every
// thread started later inherits the blocked mask (workers get a clean one).
// SIGUSR1 is how the stopping thread wakes the main one when it is done.
sigset_t block_daemon_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGUSR1}) sigaddset(&set, sig);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

const char* signal_name(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "?";
}

int serve(const daemon::SettingsParser& parser) {
  const sigset_t signals = block_daemon_signals();
  std::vector<std::string> warnings;
  std::optional<daemon::Settings> settings = parse_settings(parser, warnings);
  if (!settings) return kExitFailure;
  // Probed before any thread exists (it forks).
  const pool::Protections protections = pool::probe_protections();
  daemon::Log log(settings->log_level, settings->log_format);
  for (const std::string& w : warnings) log.warn(w);
  daemon::Daemon d(*settings, parser.provenance(), log, protections);
  try {
    d.start();
  } catch (const std::system_error& e) {
    log.error(std::string("cannot start: ") + e.what());
    return e.code() == std::errc::address_in_use ? kExitAddressInUse : kExitFailure;
  } catch (const std::exception& e) {
    log.error(std::string("cannot start: ") + e.what());
    return kExitFailure;
  }
  const std::string address = d.executor_address();
  std::printf("corral serve: executor on ws://%s/ (probes: http://%s/healthz, /readyz, /metrics)\n",
              address.c_str(), address.c_str());
  if (auto admin = d.admin_address())
    std::printf("corral serve: admin on http://%s/__status__\n", admin->c_str());
  std::printf(
      "corral serve: try `corral exec --server ws://%s/ examples/hello.js`; stop with "
      "Ctrl-C\n",
      address.c_str());
  std::fflush(stdout);

  // SIGHUP reloads the token file; the first SIGTERM or SIGINT starts the
  // stop (on its own thread, so that this one keeps listening); a second one
  // during the stop kills the workers and exits kExitForcedStop at once.
  std::atomic<int> stop_result{-1};  // -1 running, else 0/1: d.stop()'s answer
  std::thread stopper;
  const pthread_t main_thread = pthread_self();
  while (true) {
    int sig = 0;
    sigwait(&signals, &sig);
    if (sig == SIGHUP) {
      log.info("received SIGHUP");
      d.reload_tokens();
      continue;
    }
    if (sig == SIGUSR1) {
      if (stop_result.load() < 0) continue;  // not from the stopper
      break;
    }
    if (stopper.joinable()) {
      log.error(std::string("received a second ") + signal_name(sig) +
                " during the stop: stopping at once (exit " + std::to_string(kExitForcedStop) +
                ")");
      d.kill_workers();
      std::fflush(stdout);
      std::_Exit(kExitForcedStop);
    }
    log.info(std::string("received ") + signal_name(sig));
    stopper = std::thread([&d, &stop_result, main_thread] {
      stop_result.store(d.stop() ? 1 : 0);
      pthread_kill(main_thread, SIGUSR1);
    });
  }
  stopper.join();
  if (stop_result.load() == 1) return kExitClean;
  // The stop outlived its grace: leave without waiting for anything.
  std::fflush(stdout);
  std::_Exit(kExitFailure);
}

int check(const daemon::SettingsParser& parser, bool as_json) {
  std::vector<std::string> warnings;
  std::optional<daemon::Settings> settings = parse_settings(parser, warnings);
  print_warnings(warnings);
  if (!settings) return kExitFailure;
  const pool::Protections protections = pool::probe_protections();
  const daemon::CheckResult result = daemon::run_check(*settings);
  const bool locked = protections.no_new_privs && protections.seccomp;
  const bool ok = result.ok && locked;
  const std::vector<std::string> lines = daemon::describe_non_defaults(parser.provenance());
  // What a bound command (a manifest without `confinement`) gets here: the
  // kernel's probes through a supervisor, as `corral tools` shows per
  // operation.
  const std::vector<process::Protection> command_protections =
      process::Supervisor().protections(process::Hardening{});
  if (as_json) {
    json::object o{{"ok", ok},
                   {"value", result.value},
                   {"seconds", result.seconds},
                   {"protections", json::parse(pool::to_json(protections))}};
    if (!result.failure.empty()) o["failure"] = result.failure;
    if (!locked) o["failure"] = "the worker cannot lock itself down (no_new_privs and seccomp)";
    json::array settings_lines;
    for (const auto& line : lines) settings_lines.emplace_back(line);
    o["settings"] = std::move(settings_lines);
    json::array units;
    for (process::UnitKind unit : process::available_units())
      units.emplace_back(std::string(process::to_string(unit)));
    o["containment"] = std::move(units);
    json::array confinement;
    for (const auto& p : command_protections) {
      confinement.push_back(
          json::object{{"name", p.name}, {"enforced", p.enforced}, {"detail", p.detail}});
    }
    o["command_protections"] = std::move(confinement);
    std::printf("%s\n", json::serialize(o).c_str());
  } else {
    if (ok) {
      std::printf("check: ok: a hardened worker returned 42 in %.0f ms\n", result.seconds * 1000);
    } else {
      std::printf("check: FAILED: %s\n",
                  result.ok ? "the worker cannot lock itself down" : result.failure.c_str());
    }
    std::printf("Settings:\n");
    for (const auto& line : lines) std::printf("  %s\n", line.c_str());
    print_protections(protections);
    std::printf("Command containment available:");
    for (process::UnitKind unit : process::available_units())
      std::printf(" %s", std::string(process::to_string(unit)).c_str());
    std::printf("\n");
    std::printf("Bound commands' default (confined) profile on this machine:\n");
    for (const auto& p : command_protections) {
      std::printf("  %-22s %s%s\n", p.name.c_str(),
                  p.enforced ? "active: " : "NOT ENFORCED: ", p.detail.c_str());
    }
  }
  return ok ? kExitClean : kExitCannotSandbox;
}

// The daemon's answer, or nullopt after saying on stderr why there is none.
std::optional<daemon::AdminResponse> ask_admin(const std::string& host, std::uint16_t port,
                                               std::string_view method, std::string_view path) {
  print_warnings(environment_warnings());
  try {
    daemon::AdminResponse response = daemon::admin_request(host, port, method, path);
    if (response.status != 200) {
      std::fprintf(stderr, "corral: the admin listener at %s:%u answered %d: %s", host.c_str(),
                   static_cast<unsigned>(port), response.status, response.body.c_str());
      return std::nullopt;
    }
    return response;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "corral: %s\n", e.what());
    return std::nullopt;
  }
}

int print_admin(const std::string& host, std::uint16_t port, std::string_view method,
                std::string_view path) {
  const std::optional<daemon::AdminResponse> response = ask_admin(host, port, method, path);
  if (!response) return kExitFailure;
  std::printf("%s", response->body.c_str());
  return kExitClean;
}

int print_status(const std::string& host, std::uint16_t port, bool as_json) {
  const std::optional<daemon::AdminResponse> response = ask_admin(host, port, "GET", "/__status__");
  if (!response) return kExitFailure;
  if (as_json) {
    std::printf("%s", response->body.c_str());
    return kExitClean;
  }
  try {
    for (const std::string& line : describe_status(json::parse(response->body).as_object()))
      std::printf("%s\n", line.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "corral: the daemon's status is not what this corral reads (%s): %s",
                 e.what(), response->body.c_str());
    return kExitFailure;
  }
  return kExitClean;
}

}  // namespace

void add_daemon_commands(CLI::App& app, Action& action) {
  auto* serve_cmd = app.add_subcommand(
      "serve", "Run the executor daemon (WebSocket protocol, probes, metrics, admin listener)");
  auto serve_settings = std::make_shared<daemon::SettingsParser>(*serve_cmd);
  serve_cmd->callback(
      [&action, serve_settings] { action = [serve_settings] { return serve(*serve_settings); }; });

  auto* check_cmd = app.add_subcommand(
      "check", "Run one execution end to end and report what this machine enforces");
  auto check_settings = std::make_shared<daemon::SettingsParser>(*check_cmd);
  auto as_json = std::make_shared<bool>(false);
  check_cmd->add_flag("--json", *as_json, "Print one JSON object");
  check_cmd->callback([&action, check_settings, as_json] {
    action = [check_settings, as_json] { return check(*check_settings, *as_json); };
  });

  auto admin_host = std::make_shared<std::string>("127.0.0.1");
  auto admin_port = std::make_shared<std::uint16_t>(8081);
  auto add_admin_flags = [&](CLI::App* cmd) {
    cmd->add_option("--admin-host", *admin_host, "Address of the daemon's admin listener")
        ->envname("CORRAL_ADMIN_HOST")
        ->type_name("ADDRESS")
        ->capture_default_str();
    cmd->add_option("--admin-port", *admin_port, "Port of the daemon's admin listener")
        ->envname("CORRAL_ADMIN_PORT")
        ->type_name("PORT")
        ->capture_default_str();
  };
  auto* status_cmd = app.add_subcommand(
      "status", "Print a running daemon's status: workers, executions, queue, protections");
  add_admin_flags(status_cmd);
  auto status_json = std::make_shared<bool>(false);
  status_cmd->add_flag("--json", *status_json, "Print the admin listener's JSON (/__status__)");
  status_cmd->callback([&action, admin_host, admin_port, status_json] {
    action = [admin_host, admin_port, status_json] {
      return print_status(*admin_host, *admin_port, *status_json);
    };
  });
  auto* maintenance_cmd =
      app.add_subcommand("maintenance", "Turn a running daemon's maintenance mode on or off");
  add_admin_flags(maintenance_cmd);
  auto mode = std::make_shared<std::string>("status");
  maintenance_cmd->add_option("mode", *mode, "on, off or status")
      ->type_name("on|off|status")
      ->check(CLI::IsMember({"on", "off", "status"}))
      ->capture_default_str();
  maintenance_cmd->callback([&action, admin_host, admin_port, mode] {
    action = [admin_host, admin_port, mode] {
      const std::string_view method = *mode == "on" ? "PUT" : *mode == "off" ? "DELETE" : "GET";
      return print_admin(*admin_host, *admin_port, method, "/__maintenance__");
    };
  });
}

}  // namespace corral::app
