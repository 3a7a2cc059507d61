// src/mcp/upstream_restarting.cc: RestartingUpstream, a stdio upstream kept
// running: each start initialized and its tools listed, restarts after a
// backoff, and the status an operator sees of it.
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <condition_variable>
#include <future>
#include <thread>

#include "mcp/upstream_internal.hpp"

namespace corral::mcp::upstream_detail {

namespace {

// Initializes a started stdio server and lists its tools, by `deadline`.
std::vector<UpstreamTool> initialize_stdio(StdioUpstream& client,
                                           std::chrono::steady_clock::time_point deadline) {
  client.request_sync("initialize", initialize_params(), deadline);
  client.notify("notifications/initialized");
  std::string cursor;
  std::vector<UpstreamTool> tools;
  do {
    json::object params;
    if (!cursor.empty()) params["cursor"] = cursor;
    cursor = read_tools_page(client.request_sync("tools/list", std::move(params), deadline), tools);
  } while (!cursor.empty());
  return tools;
}

std::string rfc3339(std::chrono::steady_clock::time_point at) {
  const auto system = std::chrono::system_clock::now() +
                      std::chrono::duration_cast<std::chrono::system_clock::duration>(
                          at - std::chrono::steady_clock::now());
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}Z", std::chrono::floor<std::chrono::seconds>(system));
}

// RestartingUpstream: a stdio server kept running. When it exits it is
// reaped and started again after a backoff (min, doubling per failed attempt,
// capped at max); each start initializes and re-lists the tools. The
// catalogue keeps the tools listed at the first start (a restart that lists
// others is logged). One monitor thread per upstream, asleep between events.
class RestartingUpstream : public UpstreamClient {
 public:
  RestartingUpstream(Upstream upstream, std::chrono::milliseconds timeout, Logger logger,
                     std::chrono::milliseconds backoff_min, std::chrono::milliseconds backoff_max)
      : upstream_(std::move(upstream)),
        timeout_(timeout),
        logger_(std::move(logger)),
        backoff_min_(backoff_min),
        backoff_max_(backoff_max),
        containment_(std::make_shared<ServerContainment>(upstream_hardening(upstream_))) {
    name_ = upstream_.name;
    // Every start happens on the monitor thread (see StdioUpstream), the
    // first one too; its failure stops the service's start.
    std::promise<void> first;
    std::future<void> started = first.get_future();
    monitor_ = std::thread([this, &first] { monitor(first); });
    try {
      started.get();
    } catch (...) {
      monitor_.join();
      throw;
    }
  }
  ~RestartingUpstream() override { close(); }

  std::function<void()> call_tool(const std::string& tool, json::value arguments,
                                  std::chrono::milliseconds timeout, Done done) override {
    std::shared_ptr<StdioUpstream> client;
    std::string down;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) {
        down = "unavailable: the upstream server " + name_ + " was closed";
      } else if (!current_ || state_ != "up") {
        down = "unavailable: the upstream server " + name_ + " is restarting";
        if (!last_exit_.empty()) down += " (it ended: " + last_exit_ + ")";
        if (next_attempt_)
          down += fmt::format("; the next attempt is in {:.1f} s, at {}; retry then",
                              std::max(0.0, std::chrono::duration<double>(
                                                *next_attempt_ - std::chrono::steady_clock::now())
                                                .count()),
                              rfc3339(*next_attempt_));
        else
          down += "; an attempt is under way, retry in a moment";
      } else {
        client = current_;
      }
    }
    if (!client) {
      done(std::nullopt, down);
      return [] {};
    }
    auto stop = client->call_tool(tool, std::move(arguments), timeout, std::move(done));
    return [client, stop] { stop(); };
  }

  UpstreamStatus status() const override {
    std::lock_guard lock(mutex_);
    UpstreamStatus s;
    s.name = name_;
    s.transport = "stdio";
    s.state = state_;
    s.pid = state_ == "up" ? pid_ : 0;
    s.restarts = restarts_;
    s.last_exit = last_exit_;
    s.since = since_;
    s.next_attempt = next_attempt_;
    s.tools = tools_.size();
    s.unit = std::string(process::to_string(containment_->unit()));
    s.protections = containment_->protections();
    return s;
  }

  void close() override {
    std::shared_ptr<StdioUpstream> client;
    {
      std::lock_guard lock(mutex_);
      if (stopping_ && !monitor_.joinable() && !current_) return;
      stopping_ = true;
      client = std::move(current_);
      wake_.notify_all();
    }
    // The server first, while the monitor thread (its init's parent) lives:
    // SIGTERM, then SIGKILL, to the whole tree.
    if (client) client->close();
    if (monitor_.joinable() && monitor_.get_id() != std::this_thread::get_id()) monitor_.join();
  }

 private:
  // Starts and initializes one server; its end (for `generation`) wakes the
  // monitor. Throws what failed.
  std::shared_ptr<StdioUpstream> start_one(std::uint64_t& generation) {
    {
      std::lock_guard lock(mutex_);
      generation = ++generation_;
    }
    const std::uint64_t g = generation;
    auto client = std::make_shared<StdioUpstream>(upstream_, containment_, logger_, [this, g] {
      std::lock_guard lock(mutex_);
      if (g == live_) {
        dead_ = true;
        wake_.notify_all();
      }
    });
    try {
      client->set_tools(initialize_stdio(*client, std::chrono::steady_clock::now() + timeout_));
    } catch (...) {
      const std::string exit = (client->close(), client->exit_text());
      std::lock_guard lock(mutex_);
      if (!exit.empty()) last_exit_ = exit;
      throw;
    }
    return client;
  }

  // Under mutex_: `client` is the live server.
  void adopt(std::shared_ptr<StdioUpstream> client, std::uint64_t generation) {
    pid_ = client->pid();
    live_ = generation;
    dead_ = client->ended();  // it may have ended before `live_` named it
    current_ = std::move(client);
    state_ = "up";
    since_ = std::chrono::steady_clock::now();
    next_attempt_.reset();
    if (dead_) wake_.notify_all();
  }

  void log(LogLevel level, const std::string& message) noexcept {
    try {
      if (logger_) logger_(level, message);
    } catch (...) {
    }
  }

  // The monitor thread: the first start (its outcome to `first`), then one
  // restart per exit until close().
  void monitor(std::promise<void>& first) noexcept {
    try {
      std::uint64_t generation = 0;
      auto client = start_one(generation);
      std::lock_guard lock(mutex_);
      tools_ = client->tools();
      adopt(std::move(client), generation);
    } catch (...) {
      first.set_exception(std::current_exception());
      return;
    }
    first.set_value();
    int failures = 0;  // attempts in a row that did not come up
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      wake_.wait(lock, [this] { return stopping_ || dead_; });
      if (stopping_) break;
      // The server ended: reap it (close() also stops one that only closed
      // its stdout), then try again after the backoff.
      std::shared_ptr<StdioUpstream> old = std::move(current_);
      dead_ = false;
      live_ = 0;
      lock.unlock();
      if (old) old->close();
      const std::string exit = old ? old->exit_text() : std::string();
      old.reset();
      lock.lock();
      if (!exit.empty()) last_exit_ = exit;
      while (!stopping_) {
        auto delay = backoff_min_ * (1LL << std::min(failures, 20));
        if (delay > backoff_max_) delay = backoff_max_;
        state_ = failures >= 5 ? "failed" : "restarting";
        since_ = std::chrono::steady_clock::now();
        next_attempt_ = since_ + delay;
        log(LogLevel::warn,
            fmt::format("upstream {} ended ({}); restarting in {} ms", name_,
                        last_exit_.empty() ? "no status" : last_exit_, delay.count()));
        if (wake_.wait_until(lock, *next_attempt_, [this] { return stopping_; })) break;
        next_attempt_.reset();
        ++restarts_;
        lock.unlock();
        std::shared_ptr<StdioUpstream> client;
        std::uint64_t generation = 0;
        std::string error;
        try {
          client = start_one(generation);
        } catch (const std::exception& e) {
          error = e.what();
        } catch (...) {
          error = "not a std::exception";
        }
        lock.lock();
        if (!client) {
          ++failures;
          log(LogLevel::warn, "upstream " + name_ + ": the restart failed: " + error);
          continue;
        }
        if (stopping_) {
          lock.unlock();
          client->close();
          lock.lock();
          break;
        }
        failures = 0;
        std::vector<std::string> before, after;
        for (const auto& t : tools_) before.push_back(t.name);
        for (const auto& t : client->tools()) after.push_back(t.name);
        if (before != after)
          log(LogLevel::warn, "upstream " + name_ +
                                  " lists other tools after its restart; the catalogue keeps "
                                  "the first list until corral restarts");
        log(LogLevel::info, fmt::format("upstream {} restarted (pid {})", name_, client->pid()));
        adopt(std::move(client), generation);
        break;
      }
    }
  }

  Upstream upstream_;
  std::chrono::milliseconds timeout_;
  Logger logger_;
  std::chrono::milliseconds backoff_min_, backoff_max_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::shared_ptr<StdioUpstream> current_;
  std::uint64_t generation_ = 0;
  std::uint64_t live_ = 0;
  bool dead_ = false;
  bool stopping_ = false;
  std::string state_ = "up";
  int pid_ = 0;
  std::uint64_t restarts_ = 0;
  std::string last_exit_;
  std::chrono::steady_clock::time_point since_ = std::chrono::steady_clock::now();
  std::optional<std::chrono::steady_clock::time_point> next_attempt_;
  std::shared_ptr<ServerContainment> containment_;
  std::thread monitor_;
};

}  // namespace

std::unique_ptr<UpstreamClient> start_restarting(const Upstream& upstream,
                                                 std::chrono::milliseconds timeout,
                                                 const Logger& logger,
                                                 std::chrono::milliseconds backoff_min,
                                                 std::chrono::milliseconds backoff_max) {
  auto client =
      std::make_unique<RestartingUpstream>(upstream, timeout, logger, backoff_min, backoff_max);
  return client;
}

}  // namespace corral::mcp::upstream_detail
