// tests/mcp/mcp_test_util.hpp: a real MCP Service (real `corral worker`
// processes, real bound commands) and a Session driven message by message;
// a Stream that records what each exchange received.
#pragma once

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>
#include "core/json.hpp"

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
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

// A FIFO in a fresh directory: fixture_spawn writes its pids to it once its
// process tree exists, so reading it waits (no sleep) for the call to run.
class Fifo {
 public:
  Fifo() {
    char dir[] = "/tmp/corral-mcp-fifo-XXXXXX";
    EXPECT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
    path_ = dir_ + "/pids";
    EXPECT_EQ(::mkfifo(path_.c_str(), 0600), 0);
  }
  ~Fifo() { std::filesystem::remove_all(dir_); }
  Fifo(const Fifo&) = delete;
  Fifo& operator=(const Fifo&) = delete;
  const std::string& path() const { return path_; }
  // Blocks until the writer wrote and closed.
  std::vector<pid_t> pids() {
    std::ifstream in(path_);
    std::vector<pid_t> out;
    pid_t pid;
    while (in >> pid) out.push_back(pid);
    return out;
  }

 private:
  std::string dir_, path_;
};

// Checks `value` against the flat object schema the command tools publish
// (bind::output_schema): required keys present, no other keys when
// additionalProperties is false, each property of its type. Empty when it
// conforms, else what does not.
inline std::string schema_mismatch(const json::value& value, const json::object& schema) {
  if (!value.is_object()) return "not an object";
  const json::object& o = value.as_object();
  const json::object& props = schema.at("properties").as_object();
  if (const json::value* required = schema.if_contains("required"))
    for (const auto& key : required->as_array())
      if (!o.contains(key.as_string())) return "missing " + std::string(key.as_string());
  const json::value* extra = schema.if_contains("additionalProperties");
  for (const auto& [key, v] : o) {
    const json::value* p = props.if_contains(key);
    if (!p) {
      if (extra && extra->is_bool() && !extra->as_bool()) return "unexpected " + std::string(key);
      continue;
    }
    const json::value* type = p->as_object().if_contains("type");
    if (!type) continue;
    const std::string t(type->as_string());
    const bool ok = (t == "string" && v.is_string()) || (t == "boolean" && v.is_bool()) ||
                    (t == "integer" && (v.is_int64() || v.is_uint64())) ||
                    (t == "number" && v.is_number()) || (t == "object" && v.is_object()) ||
                    (t == "array" && v.is_array());
    if (!ok) return std::string(key) + " is not of type " + t;
  }
  return {};
}

inline std::string text_of(const json::object& result, std::size_t i = 0) {
  return std::string(result.at("content").as_array().at(i).at("text").as_string());
}

}  // namespace corral::mcp::testing
