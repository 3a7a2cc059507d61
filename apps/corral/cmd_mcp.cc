// `corral mcp`: an MCP server on stdin/stdout (for Claude Desktop, Claude
// Code, Cursor and every client that starts its servers as processes). It
// takes the daemon's settings (workers, timeouts, memory, the mcp-* ones);
// logs go to stderr only, never to stdout.
#include <signal.h>
#include <unistd.h>

#include <cstdio>

#include "commands.hpp"
#include "corral/mcp.hpp"
#include "corral/pool.hpp"
#include "daemon/log.hpp"
#include "daemon/settings.hpp"

namespace corral::app {

namespace {

int serve_mcp(const daemon::SettingsParser& parser) {
  // A client that closed our stdout must not kill us mid-cleanup.
  ::signal(SIGPIPE, SIG_IGN);
  std::vector<std::string> warnings;
  std::optional<daemon::Settings> settings = parse_settings(parser, warnings, false);
  if (!settings) return kExitFailure;
  daemon::Log log(settings->log_level, settings->log_format);
  for (const std::string& w : warnings) log.warn(w);
  const server::Options server_options = daemon::to_server_options(*settings);
  pool::WorkerPool pool(server_options.pool);
  std::shared_ptr<mcp::Service> service;
  try {
    mcp::Options options = daemon::to_mcp_options(*settings);
    options.logger = [&log](mcp::LogLevel level, const std::string& message) {
      log.write(static_cast<server::LogLevel>(level), message);
    };
    service = mcp::Service::start(std::move(options), pool);
  } catch (const std::exception& e) {
    log.error(std::string("cannot start: ") + e.what());
    return kExitFailure;
  }
  log.info("corral mcp: serving MCP on stdio");
  const int rc = mcp::serve_stdio(*service, STDIN_FILENO, STDOUT_FILENO);
  service.reset();
  pool.shutdown(std::chrono::seconds(1));
  log.flush();
  return rc == 0 ? kExitClean : kExitFailure;
}

}  // namespace

void add_mcp_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("mcp", find_daemon_command("mcp")->description);
  auto settings = std::make_shared<daemon::SettingsParser>(*cmd);
  add_mcp_config_command(*cmd, action);
  cmd->callback([&action, settings, cmd] {
    // `corral mcp config ...` set its own action.
    if (cmd->get_subcommands().empty()) {
      action = [settings] { return serve_mcp(*settings); };
    }
  });
}

}  // namespace corral::app
