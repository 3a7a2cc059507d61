// `corral status` / `corral maintenance`: ask a running daemon's admin
// listener (front: no engine).
#include <cstdio>
#include <memory>
#include <optional>

#include "cli.hpp"
#include "client/admin.hpp"
#include "commands.hpp"

namespace corral::app {

namespace {

namespace json = core::json;

// The daemon's answer, or nullopt after saying on stderr why there is none.
std::optional<client::AdminResponse> ask_admin(const std::string& host, std::uint16_t port,
                                               std::string_view method, std::string_view path) {
  print_warnings(environment_warnings());
  try {
    client::AdminResponse response = client::admin_request(host, port, method, path);
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
  const std::optional<client::AdminResponse> response = ask_admin(host, port, method, path);
  if (!response) return kExitFailure;
  std::printf("%s", response->body.c_str());
  return kExitClean;
}

int print_status(const std::string& host, std::uint16_t port, bool as_json) {
  const std::optional<client::AdminResponse> response = ask_admin(host, port, "GET", "/__status__");
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

void add_admin_commands(CLI::App& app, Action& action) {
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
