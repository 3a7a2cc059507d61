#include "daemon/daemon.hpp"

#include <signal.h>

#include <future>
#include <mutex>
#include <thread>

#include "core/json.hpp"
#include "corral/process.hpp"
#include "mcp/http.hpp"

namespace corral::daemon {

namespace json = core::json;  // Boost.JSON with corral's writer

namespace {

json::object stats_to_object(const pool::Stats& stats) {
  json::object executions;
  executions["ok"] = stats.executions[0];
  for (int i = 0; i < kFailureCodeCount; ++i) {
    if (stats.executions[1 + i] == 0) continue;
    executions[std::string(to_string(static_cast<FailureCode>(i)))] = stats.executions[1 + i];
  }
  json::object rejections;
  for (int i = 0; i < pool::kRejectionCount; ++i)
    rejections[std::string(pool::to_string(static_cast<pool::Rejection>(i)))] = stats.rejections[i];
  json::object exits;
  for (int i = 0; i < pool::kWorkerExitCount; ++i)
    exits[std::string(pool::to_string(static_cast<pool::WorkerExit>(i)))] = stats.worker_exits[i];
  return json::object{
      {"workers", json::object{{"live", stats.workers_live},
                               {"started", stats.workers_started},
                               {"exits", std::move(exits)}}},
      {"executions",
       json::object{{"running", stats.executions_running}, {"by_outcome", std::move(executions)}}},
      {"queue", json::object{{"depth", stats.queue_depth}}},
      {"rejections", std::move(rejections)},
      {"tool_calls", stats.tool_calls},
  };
}

}  // namespace

struct Daemon::McpMount {
  std::mutex mutex;
  std::shared_ptr<mcp::HttpEndpoint> endpoint;
  std::shared_ptr<mcp::Service> service;  // for /metrics (bound commands, upstreams)
  std::string metrics() {
    std::shared_ptr<mcp::Service> s;
    {
      std::lock_guard lock(mutex);
      s = service;
    }
    return s ? s->metrics() : std::string();
  }
  std::shared_ptr<mcp::HttpEndpoint> get() {
    std::lock_guard lock(mutex);
    return endpoint;
  }
};

Daemon::Daemon(Settings settings, std::vector<Provenance> provenance, Log& log,
               pool::Protections protections)
    : settings_(std::move(settings)),
      provenance_(std::move(provenance)),
      log_(log),
      protections_(std::move(protections)),
      started_(std::chrono::steady_clock::now()) {}

Daemon::~Daemon() {
  if (!stopped_ && server_) stop();
}

void Daemon::start() {
  if (!orphans_) orphans_ = std::make_unique<process::OrphanReaper>();
  server::Options options = to_server_options(settings_);
  use_tokens_in_force(options);
  options.logger = log_.logger();
  options.on_execution = log_.execution_recorder();
  mcp::HttpOptions mcp_http;
  if (settings_.mcp) mcp_http = prepare_mcp_mount(options);
  server_ = std::make_unique<server::Server>(std::move(options));
  // Before listen: a bad manifest or upstream leaves nothing listening.
  if (settings_.mcp) {
    server::Routes::add(*server_,
                        mcp::HttpEndpoint::route([mount = mcp_mount_] { return mount->get(); },
                                                 mcp_http.body_limit));
    start_mcp_service(std::move(mcp_http));
  }
  try {
    server_->listen();  // a taken port throws here
    server_->pool().subscribe([this](const pool::Event& event) { on_pool_event(event); });
    if (settings_.admin) start_admin_listener();
  } catch (...) {  // what came before is released: the service (its upstreams), the server
    release_after_failed_start();
    throw;
  }
  log_.info("executor listening on " + executor_address() +
            (admin_ ? ", admin listener on " + admin_->address() : std::string()));
}

void Daemon::use_tokens_in_force(server::Options& options) {
  // The tokens in force: a set SIGHUP can replace when it came from a file.
  std::vector<std::string> tokens;
  if (!settings_.auth_token.empty()) tokens.push_back(settings_.auth_token);
  if (!settings_.auth_token_file.empty()) tokens = read_token_file(settings_.auth_token_file);
  if (!tokens.empty()) {
    tokens_ = std::make_shared<TokenSet>(std::move(tokens));
    options.identify = bearer_identity(tokens_);
  }
}

mcp::HttpOptions Daemon::prepare_mcp_mount(server::Options& options) {
  mcp_mount_ = std::make_shared<McpMount>();
  mcp::HttpOptions mcp_http;
  mcp_http.max_sessions = settings_.mcp_max_sessions;
  mcp_http.session_idle = settings_.mcp_session_idle;
  mcp_http.identify = options.identify;
  mcp_http.logger = [this](LogLevel level, const std::string& message) {
    log_.write(level, message);
  };
  if (options.metrics) {  // the server's own instruments, then the service's
    options.metrics->render = [render = options.metrics->render,
                               mount = mcp_mount_](const std::string& own) {
      return render(own) + mount->metrics();
    };
  }
  return mcp_http;
}

void Daemon::start_mcp_service(mcp::HttpOptions mcp_http) {
  mcp::Options mcp_options = to_mcp_options(settings_);
  mcp_options.logger = mcp_http.logger;
  try {
    mcp_service_ = mcp::Service::start(std::move(mcp_options), server_->pool());
  } catch (...) {
    server_.reset();
    throw;
  }
  std::lock_guard lock(mcp_mount_->mutex);
  mcp_mount_->endpoint = std::make_shared<mcp::HttpEndpoint>(mcp_service_, std::move(mcp_http));
  mcp_mount_->service = mcp_service_;
}

void Daemon::on_pool_event(const pool::Event& event) {
  if (event.kind == pool::Event::Kind::worker_started) {
    std::lock_guard lock(workers_mutex_);
    worker_pids_.insert(event.pid);
    return;
  }
  if (event.kind != pool::Event::Kind::worker_exited) return;
  {
    std::lock_guard lock(workers_mutex_);
    worker_pids_.erase(event.pid);
  }
  if (!event.exit) return;
  const pool::WorkerExit exit = *event.exit;
  const std::string line = "worker " + std::to_string(event.worker) + " (pid " +
                           std::to_string(event.pid) +
                           ") exited: " + std::string(pool::to_string(exit));
  if (exit == pool::WorkerExit::retired || exit == pool::WorkerExit::shutdown ||
      exit == pool::WorkerExit::memory_bound) {
    log_.debug(line);
  } else {
    log_.warn(line);
  }
}

void Daemon::start_admin_listener() {
  admin_ = std::make_unique<AdminListener>(
      settings_.admin_host, settings_.admin_port,
      [this](std::string_view method, std::string_view path) { return route(method, path); },
      [this](const std::string& message) { log_.error(message); },
      server::GuardPolicy{settings_.allowed_origins, settings_.allowed_hosts});
  admin_->listen();
}

void Daemon::release_after_failed_start() {
  admin_.reset();
  if (mcp_service_) {
    {
      std::lock_guard lock(mcp_mount_->mutex);
      mcp_mount_->endpoint.reset();
      mcp_mount_->service.reset();
    }
    mcp_service_->shutdown();
    mcp_service_.reset();
  }
  server_->close();
  server_.reset();
}

std::string Daemon::executor_address() const { return server_->address().to_string(); }

std::optional<std::string> Daemon::admin_address() const {
  if (!admin_) return std::nullopt;
  return admin_->address();
}

bool Daemon::stop() {
  if (stopped_ || !server_) return true;  // stopped, or never started (or its start failed)
  stopped_ = true;
  log_.info("stopping: draining executions (shutdown grace " +
            std::to_string(settings_.shutdown_grace.count()) + " ms)");
  // The stop runs on its own thread so that the grace can bound it.
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  std::thread([this, done] {
    if (mcp_mount_) {  // MCP sessions end first: their calls are cancelled
      std::shared_ptr<mcp::HttpEndpoint> endpoint;
      {
        std::lock_guard lock(mcp_mount_->mutex);
        endpoint.swap(mcp_mount_->endpoint);
      }
      if (endpoint) endpoint->close();
      if (mcp_service_) mcp_service_->shutdown();
    }
    server_->close();  // the admin listener still answers meanwhile
    if (admin_) admin_->close();
    log_.info("stopped");
    log_.flush();
    done->set_value();
  }).detach();
  if (finished.wait_for(settings_.shutdown_grace) == std::future_status::ready) return true;
  const pool::Stats stats = server_->pool().stats();
  log_.error("the stop outlived its shutdown grace of " +
             std::to_string(settings_.shutdown_grace.count()) +
             " ms; still running: " + std::to_string(stats.executions_running) + " executions, " +
             std::to_string(stats.workers_live) + " worker processes");
  log_.flush();
  return false;
}

bool Daemon::reload_tokens() {
  if (!tokens_ || settings_.auth_token_file.empty()) {
    log_.info("SIGHUP: no --auth-token-file to reload");
    return false;
  }
  std::vector<std::string> tokens;
  try {
    tokens = read_token_file(settings_.auth_token_file);
  } catch (const std::exception& e) {
    log_.error(std::string("token file not reloaded, the tokens in force stay: ") + e.what());
    return false;
  }
  const TokenSet::Change change = tokens_->replace(std::move(tokens));
  log_.info("token file reloaded: " + std::to_string(change.count) + " tokens (" +
            std::to_string(change.added) + " added, " + std::to_string(change.removed) +
            " removed)");
  return true;
}

void Daemon::kill_workers() {
  std::lock_guard lock(workers_mutex_);
  for (int pid : worker_pids_) ::kill(pid, SIGKILL);
  log_.error("stopping at once: " + std::to_string(worker_pids_.size()) +
             " worker processes killed");
  log_.flush();
}

AdminResponse Daemon::route(std::string_view method, std::string_view path) {
  const bool get = method == "GET" || method == "HEAD";
  if (path == "/__status__") {
    if (!get) return {405, R"({"error":"Method not allowed."})"};
    return {200, status_json()};
  }
  if (path == "/__config__") {
    if (!get) return {405, R"({"error":"Method not allowed."})"};
    return {200, config_json()};
  }
  if (path == "/__maintenance__") {
    // Idempotent: PUT twice is on, DELETE twice is off; each answer says
    // the state and whether this request changed it.
    const bool was_on = !server_->accepting();
    if (method == "PUT") {
      server_->stop_accepting();
      if (!was_on)
        log_.info("maintenance on: new connections are refused, running executions finish");
    } else if (method == "DELETE") {
      try {
        server_->resume_accepting();
      } catch (const std::exception& e) {
        return {409, json::serialize(json::object{{"error", e.what()}})};
      }
      if (was_on) log_.info("maintenance off: accepting connections");
    } else if (!get) {
      return {405, R"({"error":"Method not allowed."})"};
    }
    const bool on = !server_->accepting();
    return {200, json::serialize(json::object{{"maintenance", on}, {"changed", on != was_on}})};
  }
  return {404, std::string(kNoSuchRoute)};
}

std::string Daemon::status_json() const {
  json::object status = stats_to_object(server_->pool().stats());
  const double uptime =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  status["uptime_seconds"] = uptime;
  status["accepting"] = server_->accepting();
  status["draining"] = server_->draining();
  status["address"] = executor_address();
  json::value protections = json::parse(pool::to_json(protections_));
  status["protections"] = std::move(protections);
  json::array units;
  for (process::UnitKind unit : process::available_units())
    units.emplace_back(std::string(process::to_string(unit)));
  status["containment"] = std::move(units);
  if (mcp_service_) {  // bound commands' slots and upstream servers
    json::value mcp = json::parse(mcp_service_->status_json());
    for (auto& [key, value] : mcp.as_object()) status[key] = value;
  }
  return json::serialize(status);
}

std::string Daemon::config_json() const {
  json::array settings;
  for (const Provenance& p : provenance_) {
    settings.push_back(json::object{
        {"flag", p.flag}, {"env", p.env}, {"value", p.value}, {"source", to_string(p.source)}});
  }
  return json::serialize(json::object{{"settings", std::move(settings)}});
}

}  // namespace corral::daemon
