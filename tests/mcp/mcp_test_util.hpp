// tests/mcp/mcp_test_util.hpp: a real MCP Service (real `corral worker`
// processes, real bound commands) and a Session driven message by message;
// a Stream that records what each exchange received.
#pragma once

#include <gtest/gtest.h>

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
    done_.notify_all();
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
  // Waits (bounded) for a related message with this method (a request the
  // server sent, a notification), the first or the one after `skip` others;
  // null when none came.
  json::value wait_for(std::string_view method, std::size_t skip = 0,
                       std::chrono::seconds limit = std::chrono::seconds(30)) {
    std::unique_lock lock(mutex_);
    json::value found;
    done_.wait_for(lock, limit, [&] {
      std::size_t seen = 0;
      for (const json::value& m : notifications_) {
        const json::value* name = m.as_object().if_contains("method");
        if (name && name->is_string() && name->get_string() == method && seen++ == skip) {
          found = m;
          return true;
        }
      }
      return finished_;
    });
    return found;
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
  std::shared_ptr<Service> service_ptr() { return service_; }
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
  // `any_uid`: writable by every uid (0666 in a 0755 directory), for a
  // command mapped to another one (65534 in a user namespace).
  explicit Fifo(bool any_uid = false) {
    char dir[] = "/tmp/corral-mcp-fifo-XXXXXX";
    EXPECT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
    path_ = dir_ + "/pids";
    EXPECT_EQ(::mkfifo(path_.c_str(), 0600), 0);
    if (any_uid) {
      ::chmod(dir_.c_str(), 0755);
      ::chmod(path_.c_str(), 0666);
    }
  }
  ~Fifo() { std::filesystem::remove_all(dir_); }
  Fifo(const Fifo&) = delete;
  Fifo& operator=(const Fifo&) = delete;
  const std::string& dir() const { return dir_; }
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

// A FIFO at `name`.PID: reading it (read_pids) blocks until the command that
// was given its path wrote its pids and closed it.
inline std::string fifo(const std::string& name) {
  const std::string path = name + "." + std::to_string(::getpid());
  std::remove(path.c_str());
  EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0);
  return path;
}

inline std::vector<int> read_pids(const std::string& path) {
  std::ifstream in(path);
  std::vector<int> pids;
  for (int pid; in >> pid;) pids.push_back(pid);
  return pids;
}

// True while `pid` names a process that is not a zombie.
inline bool alive(int pid) {
  if (::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  return close == std::string::npos || line.substr(close + 2, 1) != "Z";
}

// Can this process create a user namespace? The kernel refuses inside a
// chroot and where a policy forbids it (tests/process/confinement_test.cc).
inline bool kernel_allows_user_namespaces() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(::unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// WatchFifo: a FIFO any uid may write (0666 in a 0755 directory, for a
// server mapped to 65534), with its read end open from the start, so that
// the test sees a writer arrive (`ready`) and, without polling a pid that
// may be reused, every writer gone (`writers_gone`: the FIFO hangs up once
// its last writer closed it, which a killed process does).
class WatchFifo {
 public:
  WatchFifo() : fifo_(true) {
    fd_ = ::open(fifo_.path().c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    EXPECT_GE(fd_, 0);
  }
  ~WatchFifo() {
    if (fd_ >= 0) ::close(fd_);
  }
  WatchFifo(const WatchFifo&) = delete;
  WatchFifo& operator=(const WatchFifo&) = delete;
  const std::string& dir() const { return fifo_.dir(); }
  const std::string& path() const { return fifo_.path(); }

  // Waits (bounded) for a writer's "ready" line.
  bool ready(std::chrono::milliseconds limit = std::chrono::seconds(30)) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (text_.find("ready\n") == std::string::npos) {
      if (!wait_readable(end)) return false;
      char chunk[256];
      const ssize_t n = ::read(fd_, chunk, sizeof chunk);
      if (n > 0) text_.append(chunk, static_cast<std::size_t>(n));
    }
    return true;
  }
  // Waits (bounded) until no process holds the write end any more.
  bool writers_gone(std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (true) {
      if (!wait_readable(end)) return false;
      char chunk[256];
      const ssize_t n = ::read(fd_, chunk, sizeof chunk);
      if (n == 0) return true;  // end of file: no writer left
    }
  }

 private:
  bool wait_readable(std::chrono::steady_clock::time_point end) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        end - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, static_cast<int>(left.count())) > 0;
  }
  Fifo fifo_;
  int fd_ = -1;
  std::string text_;
};

// Listener: a TCP socket listening on 127.0.0.1 (port 0), which a server
// without the host's network cannot reach.
class Listener {
 public:
  Listener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(fd_, 16), 0);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  ~Listener() { ::close(fd_); }
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
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
