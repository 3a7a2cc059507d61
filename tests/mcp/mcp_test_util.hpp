// tests/mcp/mcp_test_util.hpp: a real MCP Service (real `corral worker`
// processes, real bound commands) and a Session driven message by message;
// a Stream that records what each exchange received.
#pragma once

#include <gtest/gtest.h>

#include "core/json.hpp"
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "corral/mcp.hpp"
#include "corral/pool.hpp"
#include "mcp/session.hpp"

namespace corral::mcp::testing {

namespace json = core::json;

inline std::string fixture_manifest() {
  return std::string(CORRAL_SOURCE_DIR) + "/tests/mcp/fixtures/mcp_tools.yaml";
}

inline pool::Options test_pool_options() {
  pool::Options options;
  options.worker_command = {CORRAL_BINARY, "worker"};
  options.max_workers = 2;
  options.termination_delay = std::chrono::milliseconds(200);
  return options;
}

// Recorder: a Stream that keeps every message and wakes waiters on finish.
class Recorder : public Stream {
 public:
  void send(std::string message) override {
    std::lock_guard lock(mutex_);
    notifications_.push_back(json::parse(message));
  }
  void finish(std::optional<std::string> response) override {
    std::lock_guard lock(mutex_);
    finished_ = true;
    if (response) response_ = json::parse(*response);
    done_.notify_all();
  }
  // Waits (bounded) for the end of the exchange; the response or null.
  json::value wait(std::chrono::seconds limit = std::chrono::seconds(30)) {
    std::unique_lock lock(mutex_);
    if (!done_.wait_for(lock, limit, [this] { return finished_; }))
      ADD_FAILURE() << "the exchange did not finish in time";
    return response_ ? *response_ : json::value(nullptr);
  }
  std::vector<json::value> notifications() {
    std::lock_guard lock(mutex_);
    return notifications_;
  }
  bool finished() {
    std::lock_guard lock(mutex_);
    return finished_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable done_;
  bool finished_ = false;
  std::optional<json::value> response_;
  std::vector<json::value> notifications_;
};

// Harness: pool + service + one initialized session.
class Harness {
 public:
  explicit Harness(Options options = {}, bool initialize = true) : pool_(test_pool_options()) {
    if (options.manifests.empty()) options.manifests = {fixture_manifest()};
    service_ = Service::start(std::move(options), pool_);
    session_ = std::make_shared<Session>(service_);
    if (initialize) {
      json::value r =
          request("initialize",
                  json::object{{"protocolVersion", "2025-11-25"},
                               {"capabilities", json::object{}},
                               {"clientInfo", json::object{{"name", "test"}, {"version", "1"}}}});
      EXPECT_TRUE(r.as_object().contains("result"));
      notify("notifications/initialized");
    }
  }
  ~Harness() {
    session_->close();
    session_.reset();
    service_->shutdown();
    service_.reset();
    pool_.shutdown(std::chrono::seconds(1));
  }

  // Sends raw text; returns the recorder of the exchange.
  std::shared_ptr<Recorder> raw(std::string_view text) {
    auto recorder = std::make_shared<Recorder>();
    session_->handle(text, recorder);
    return recorder;
  }
  std::shared_ptr<Recorder> start(const std::string& method, json::value params,
                                  json::value id = json::value(0)) {
    if (id.is_int64() && id.get_int64() == 0) id = ++next_id_;
    json::object message{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
    if (!params.is_null()) message["params"] = std::move(params);
    return raw(json::serialize(message));
  }
  json::value request(const std::string& method, json::value params = nullptr) {
    return start(method, std::move(params))->wait();
  }
  void notify(const std::string& method, json::value params = nullptr) {
    json::object message{{"jsonrpc", "2.0"}, {"method", method}};
    if (!params.is_null()) message["params"] = std::move(params);
    auto r = raw(json::serialize(message));
    EXPECT_TRUE(r->wait().is_null());
  }
  // tools/call; returns the CallToolResult.
  json::object call(const std::string& name, json::object arguments) {
    json::value r = request("tools/call", json::object{{"name", name}, {"arguments", arguments}});
    EXPECT_TRUE(r.as_object().contains("result")) << json::serialize(r);
    return r.as_object().contains("result") ? r.at("result").as_object() : json::object{};
  }

  Service& service() { return *service_; }
  Session& session() { return *session_; }

 private:
  pool::WorkerPool pool_;
  std::shared_ptr<Service> service_;
  std::shared_ptr<Session> session_;
  std::int64_t next_id_ = 0;
};

inline std::string text_of(const json::object& result, std::size_t i = 0) {
  return std::string(result.at("content").as_array().at(i).at("text").as_string());
}

}  // namespace corral::mcp::testing
