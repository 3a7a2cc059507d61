// `corral serve`: the daemon. `corral check`: can this machine serve?
// (bin/corral: both run guests only in corral-engine workers.)
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <iostream>
#include <system_error>
#include <thread>

#include "commands.hpp"
#include "core/json.hpp"
#include "corral/process.hpp"
#include "daemon/check.hpp"
#include "daemon/daemon.hpp"
#include "daemon/log.hpp"
#include "daemon/settings.hpp"
#include "engine_path.hpp"
#include "pool/lockdown.hpp"

namespace corral::app {

namespace json = core::json;

std::optional<daemon::Settings> parse_settings(const daemon::SettingsParser& parser,
                                               std::vector<std::string>& warnings, bool listening) {
  warnings = environment_warnings();
  std::vector<std::string> errors;
  std::optional<daemon::Settings> settings = parser.parse(errors);
  if (settings && listening) {
    errors = daemon::listening_errors(*settings);
    if (!errors.empty()) settings.reset();
  }
  if (!settings) {
    // No log yet: the warnings go with the errors (a mistyped variable may
    // be why a setting is at a value that was refused).
    print_warnings(warnings);
    warnings.clear();
  }
  for (const std::string& e : errors) std::fprintf(stderr, "corral: %s\n", e.c_str());
  if (settings && settings->worker.empty()) {
    std::string error;
    settings->worker = find_engine(error);
    if (settings->worker.empty()) {
      std::fprintf(stderr, "corral: unavailable: %s\n", error.c_str());
      return std::nullopt;
    }
  }
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
  std::optional<daemon::Settings> settings = parse_settings(parser, warnings, true);
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
  std::optional<daemon::Settings> settings = parse_settings(parser, warnings, true);
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
    print_protections(json::parse(pool::to_json(protections)).as_object());
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

}  // namespace

const DaemonCommand* find_daemon_command(std::string_view name) {
  for (const DaemonCommand& command : kDaemonCommands) {
    if (name == command.name) return &command;
  }
  return nullptr;
}

void add_serve_commands(CLI::App& app, Action& action) {
  auto* serve_cmd = app.add_subcommand("serve", find_daemon_command("serve")->description);
  auto serve_settings = std::make_shared<daemon::SettingsParser>(*serve_cmd);
  serve_cmd->callback(
      [&action, serve_settings] { action = [serve_settings] { return serve(*serve_settings); }; });

  auto* check_cmd = app.add_subcommand("check", find_daemon_command("check")->description);
  auto check_settings = std::make_shared<daemon::SettingsParser>(*check_cmd);
  auto as_json = std::make_shared<bool>(false);
  check_cmd->add_flag("--json", *as_json, "Print one JSON object");
  check_cmd->callback([&action, check_settings, as_json] {
    action = [check_settings, as_json] { return check(*check_settings, *as_json); };
  });
}

}  // namespace corral::app
