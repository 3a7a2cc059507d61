// A Service's life: binding manifests, connecting upstreams, routing a tool
// call to its kind (catalogue.cc, execute_tool.cc, command_tools.cc), the
// progress ticker, delivery of every answer, shutdown; and Tasks.
#include "mcp/service.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <set>
#include <thread>

#include "mcp/results.hpp"
#include "mcp/typescript.hpp"

namespace corral::mcp {

Tasks::~Tasks() { wait_idle(); }

void Tasks::spawn(std::function<void()> fn) {
  {
    std::lock_guard lock(mutex_);
    ++active_;
  }
  // A thread that cannot start (EAGAIN) throws to the caller, which answers
  // its call; it must not count as running, or wait_idle() would never return.
  struct Uncount {
    Tasks* tasks;
    bool armed = true;
    ~Uncount() {
      if (!armed) return;
      std::lock_guard lock(tasks->mutex_);
      --tasks->active_;
      tasks->idle_.notify_all();
    }
  } uncount{this};
  std::thread([this, fn = std::move(fn)] {
    auto escaped = [this](const std::string& message) noexcept {
      try {
        if (escaped_) {
          escaped_(message);
        } else {
          std::fprintf(stderr, "corral mcp: %s\n", message.c_str());
        }
      } catch (...) {  // a logger that throws: nothing left to tell
      }
    };
    try {
      fn();
    } catch (const std::exception& e) {
      escaped(std::string("a task ended in an exception: ") + e.what());
    } catch (...) {
      escaped("a task ended in an exception that is not a std::exception");
    }
    std::lock_guard lock(mutex_);
    --active_;
    idle_.notify_all();
  }).detach();
  uncount.armed = false;
}

void Tasks::wait_idle() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return active_ == 0; });
}

Service::Impl::Impl(Options options, pool::WorkerPool& pool)
    : options_(std::move(options)),
      pool_(pool),
      results_(options_.result_retention_bytes, options_.result_retention) {}

Service::Impl::~Impl() { shutdown(); }

void Service::Impl::log(LogLevel level, const std::string& message) const {
  if (options_.logger) {
    options_.logger(level, message);
  } else if (level >= LogLevel::warn) {
    std::fprintf(stderr, "corral mcp: %s\n", message.c_str());
  }
}

void Service::Impl::start() {
  bind_manifests();
  connect_upstreams();
  build_catalogue();
  ticking_ = true;
  ticker_ = std::thread([this] { tick_loop(); });
}

void Service::Impl::tick_loop() {
  std::unique_lock lock(tick_mutex_);
  while (ticking_) {
    tick_wake_.wait_for(lock, options_.progress_interval);
    if (!ticking_) break;
    const auto now = std::chrono::steady_clock::now();
    std::vector<std::pair<std::shared_ptr<CallContext>, double>> due;
    std::erase_if(live_, [&](const auto& entry) {
      auto context = entry.first.lock();
      if (!context) return true;
      due.emplace_back(std::move(context),
                       std::chrono::duration<double>(now - entry.second).count());
      return false;
    });
    lock.unlock();
    for (auto& [context, seconds] : due) {
      try {  // the ticker's thread: a failed notification costs that notification
        context->progress(fmt::format("still running after {:.0f} s", seconds));
      } catch (const std::exception& e) {
        log(LogLevel::error, std::string("a progress notification failed: ") + e.what());
      }
    }
    due.clear();
    lock.lock();
  }
}

void Service::Impl::bind_manifests() {
  std::vector<std::pair<std::string, std::function<bind::CommandTree()>>> sources;
  for (const std::string& path : options_.manifests)
    sources.emplace_back("manifest " + path, [path] { return bind::load_manifest_file(path); });
  for (bind::CommandTree& tree : options_.trees)
    sources.emplace_back("command tree " + tree.root.name, [&tree] { return std::move(tree); });
  for (auto& [path, load] : sources) {
    std::unique_ptr<bind::Binding> binding;
    std::string name;
    try {
      bind::CommandTree tree = load();
      name = tree.root.name.empty() ? path : tree.root.name;
      binding = bind::Binding::bind(std::move(tree));
    } catch (const std::exception& e) {
      throw std::invalid_argument(fmt::format("{}: {}", path, e.what()));
    }
    for (const bind::Operation& op : binding->operations()) {
      if (!commands_.emplace(op.name, std::make_pair(binding.get(), &op)).second)
        throw std::invalid_argument(
            fmt::format("{}: the command tool {} is already bound by an earlier "
                        "manifest or tree",
                        path, op.name));
    }
    outcomes_.emplace(binding.get(), std::make_unique<Outcomes>());
    bindings_.push_back(std::move(binding));
    binding_names_.push_back(std::move(name));
  }
}

void Service::Impl::connect_upstreams() {
  for (const Upstream& upstream : options_.upstreams) {
    upstreams_.push_back(UpstreamClient::connect(
        upstream, options_.upstream_timeout,
        [this](LogLevel l, const std::string& m) { log(l, m); }, options_.restart_backoff_min,
        options_.restart_backoff_max));
    log(LogLevel::info,
        fmt::format("upstream {}: {} tools", upstream.name, upstreams_.back()->tools().size()));
  }
}

void Service::Impl::shutdown() {
  if (shut_down_.exchange(true)) return;
  {
    std::lock_guard lock(tick_mutex_);
    ticking_ = false;
    live_.clear();
  }
  tick_wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  {
    std::unique_lock lock(runs_mutex_);
    for (const auto& [id, ticket] : runs_)
      if (ticket) pool_.cancel(ticket);
  }
  const auto deadline = process::Clock::now() + std::chrono::seconds(10);
  for (auto& binding : bindings_) binding->shutdown(deadline);
  {
    std::unique_lock lock(runs_mutex_);
    runs_done_.wait(lock, [this] { return runs_.empty(); });
  }
  for (auto& upstream : upstreams_) upstream->close();
  tasks_.wait_idle();
}

void Service::Impl::call(const Tool& tool, const json::object& arguments,
                         std::shared_ptr<CallContext> context, ResultDone done) {
  try {
    start_call(tool, arguments, std::move(context), done);
  } catch (const std::exception& e) {
    log(LogLevel::error, fmt::format("tools/call {}: internal error: {}", tool.name, e.what()));
    deliver(
        done, [this] { return internal_result(); }, tool.name);
  }
}

void Service::Impl::start_call(const Tool& tool, const json::object& arguments,
                               std::shared_ptr<CallContext> context, ResultDone done) {
  if (shut_down_.load()) {
    done(command_result(
        std::nullopt,
        Failure{FailureCode::unavailable, "The MCP service is shutting down.", nullptr},
        options_.result_budget));
    return;
  }
  {
    std::lock_guard lock(tick_mutex_);
    live_.emplace_back(context, std::chrono::steady_clock::now());
  }
  if (tool.name == "execute") {
    run_execute(arguments, std::move(context), std::move(done));
  } else if (options_.mode == Mode::compact && tool.name == "search_tools") {
    search_tools(arguments, std::move(done));
  } else if (options_.mode == Mode::compact && tool.name == "get_tool_details") {
    tool_details(arguments, std::move(done));
  } else if (options_.mode == Mode::compact && tool.name == "call_tool") {
    call_tool(arguments, std::move(context), std::move(done));
  } else {
    run_command(tool.name, arguments, std::move(context), std::move(done));
  }
}

void Service::Impl::deliver(const ResultDone& done, const std::function<json::object()>& make,
                            std::string_view what) const noexcept {
  try {
    json::object result;
    try {
      result = make();
    } catch (const std::exception& e) {
      log(LogLevel::error, fmt::format("{}: internal error: {}", what, e.what()));
      result = internal_result();
    } catch (...) {
      log(LogLevel::error, fmt::format("{}: internal error (not a std::exception)", what));
      result = internal_result();
    }
    done(std::move(result));
  } catch (const std::exception& e) {
    log(LogLevel::error, fmt::format("{}: the answer could not be sent: {}", what, e.what()));
  } catch (...) {
    log(LogLevel::error, fmt::format("{}: the answer could not be sent", what));
  }
}

json::object Service::Impl::internal_result() const {
  return failure_result(Failure{FailureCode::internal,
                                "corral hit an internal error while answering this call; the "
                                "details are in its log. The session goes on.",
                                nullptr});
}

// Service

Service::Service(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Service::~Service() { impl_->shutdown(); }

std::shared_ptr<Service> Service::start(Options options, pool::WorkerPool& pool) {
  validate(options);
  auto impl = std::make_unique<Impl>(std::move(options), pool);
  impl->start();
  return std::shared_ptr<Service>(new Service(std::move(impl)));
}

void Service::shutdown() { impl_->shutdown(); }

std::vector<std::string> Service::tool_names() const {
  std::vector<std::string> names;
  for (const Tool& t : impl_->tools()) names.push_back(t.name);
  return names;
}

std::string Service::declarations() const { return impl_->declarations(); }

std::string Service::status_json() const { return json::serialize(impl_->status()); }

void validate(const Options& options) {
  if (options.result_budget < 256)
    throw std::invalid_argument("result_budget must be at least 256 bytes");
  if (options.default_timeout.count() <= 0 || options.max_timeout.count() <= 0)
    throw std::invalid_argument("default_timeout and max_timeout must be positive");
  if (options.page_size == 0) throw std::invalid_argument("page_size must be at least 1");
  if (options.result_retention.count() <= 0)
    throw std::invalid_argument("result_retention must be positive");
  if (options.progress_interval.count() <= 0)
    throw std::invalid_argument("progress_interval must be positive");
  if (options.upstream_timeout.count() <= 0)
    throw std::invalid_argument("upstream_timeout must be positive");
  std::set<std::string> names;
  for (const Upstream& u : options.upstreams) {
    if (js_identifier(u.name) != u.name)
      throw std::invalid_argument("upstream \"" + u.name +
                                  "\": the name must be a JavaScript identifier");
    if (!names.insert(u.name).second)
      throw std::invalid_argument("upstream \"" + u.name + "\" is named twice");
    if (u.command.empty() == u.url.empty())
      throw std::invalid_argument("upstream \"" + u.name + "\": give a command or a url");
  }
  sandbox::Options limits = options.run_limits;
  limits.timeout = std::chrono::seconds(1);
  sandbox::validate(limits);
}

}  // namespace corral::mcp
