// src/daemon/daemon.hpp: `corral serve` composed: the executor server, the
// pool counters, the admin listener, in that order; released in reverse.
//
// start() takes, in order: the server's listener, a subscription to the
// pool's events (worker exits are logged), the admin listener. A step that
// fails releases what came before, so a failed start leaves nothing
// listening. stop() releases in reverse: the server drains and closes while
// the admin listener still answers, then the admin listener, then the log
// flush; the whole stop is bounded by the shutdown grace.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "corral/mcp.hpp"
#include "corral/server.hpp"
#include "daemon/admin.hpp"
#include "daemon/log.hpp"
#include "daemon/settings.hpp"
#include "daemon/tokens.hpp"
#include "pool/lockdown.hpp"
#include "process/orphans.hpp"

namespace corral::mcp {
struct HttpOptions;  // mcp/http.hpp
}  // namespace corral::mcp

namespace corral::daemon {

class Daemon {
 public:
  Daemon(Settings settings, std::vector<Provenance> provenance, Log& log,
         pool::Protections protections);
  ~Daemon();

  // Throws what the failing step threw (std::system_error for a taken
  // address), after releasing the steps before it.
  void start();
  std::string executor_address() const;
  std::optional<std::string> admin_address() const;

  // Stops as described above. Returns false when the stop outlived the
  // shutdown grace (the log says what was still running); the process
  // should then exit without waiting for anything.
  bool stop();

  // SIGHUP: re-reads --auth-token-file and puts its tokens in force for new
  // connections (open ones keep working). A file that cannot be read or
  // holds no token keeps the tokens in force and logs an error. Logs counts,
  // never a token. Returns whether a new set is in force.
  bool reload_tokens();

  // A second SIGTERM or SIGINT during the stop: SIGKILLs every worker
  // process now (the caller then exits without waiting).
  void kill_workers();

  // The admin routes (public for the listener and for tests).
  AdminResponse route(std::string_view method, std::string_view path);

 private:
  // The steps of start(), in the order it takes them.

  // Puts --auth-token or --auth-token-file in force for the server (tokens_).
  void use_tokens_in_force(server::Options& options);
  // Prepares the /mcp mount (mounted once the server exists) and adds the
  // service's metrics to the server's options; returns the endpoint's
  // options for start_mcp_service.
  mcp::HttpOptions prepare_mcp_mount(server::Options& options);
  // Starts the MCP service in the server's pool and mounts its endpoint; a
  // failure releases the server.
  void start_mcp_service(mcp::HttpOptions mcp_http);
  // Tracks worker pids for kill_workers() and logs worker exits.
  void on_pool_event(const pool::Event& event);
  void start_admin_listener();
  // Releases, after a failed listen, what start() had taken before it.
  void release_after_failed_start();

  std::string status_json() const;
  std::string config_json() const;

  Settings settings_;
  std::vector<Provenance> provenance_;
  Log& log_;
  pool::Protections protections_;
  std::chrono::steady_clock::time_point started_;
  // Reaps the orphans this daemon inherits as PID 1 or subreaper (a worker
  // whose pid-namespace reaper was killed, a bound command's grandchild).
  std::unique_ptr<process::OrphanReaper> orphans_;
  std::unique_ptr<server::Server> server_;
  std::unique_ptr<AdminListener> admin_;
  // MCP at /mcp on the executor port (when settings.mcp): the service runs
  // in the server's pool; the route finds the endpoint through `mcp_mount_`.
  struct McpMount;
  std::shared_ptr<McpMount> mcp_mount_;
  std::shared_ptr<mcp::Service> mcp_service_;
  // The tokens in force (--auth-token or --auth-token-file; SIGHUP replaces
  // those of the file). Null: every caller is anonymous.
  std::shared_ptr<TokenSet> tokens_;
  // The pids of live workers, from the pool's events, for kill_workers().
  std::mutex workers_mutex_;
  std::set<int> worker_pids_;
  bool stopped_ = false;
};

}  // namespace corral::daemon
