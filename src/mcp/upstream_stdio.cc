// src/mcp/upstream_stdio.cc: StdioUpstream, an upstream server started as a
// child process and spoken to in newline-delimited JSON-RPC on its stdin and
// stdout.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <future>

#include "core/jsonrpc.hpp"
#include "mcp/upstream_internal.hpp"

namespace corral::mcp::upstream_detail {

namespace jsonrpc = core::jsonrpc;

StdioUpstream::StdioUpstream(const Upstream& upstream,
                             std::shared_ptr<ServerContainment> containment, Logger logger,
                             std::function<void()> on_end)
    : logger_(std::move(logger)), on_end_(std::move(on_end)) {
  name_ = upstream.name;
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe: " + std::string(strerror(errno)));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    throw std::runtime_error("pipe: " + std::string(strerror(errno)));
  }
  if (::pipe2(stop_, O_CLOEXEC) != 0) {
    for (int fd : {in[0], in[1], out[0], out[1]}) ::close(fd);
    throw std::runtime_error("pipe: " + std::string(strerror(errno)));
  }
  wake_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_ < 0) {
    for (int fd : {in[0], in[1], out[0], out[1], stop_[0], stop_[1]}) ::close(fd);
    throw std::runtime_error("eventfd: " + std::string(strerror(errno)));
  }
  to_child_ = in[1];
  from_child_ = out[0];
  try {
    process_ =
        std::make_unique<ServerProcess>(std::move(containment), upstream.command, in[0], out[1]);
  } catch (const std::exception& e) {
    ::close(in[0]);
    ::close(out[1]);
    close();
    throw std::runtime_error("cannot start " + upstream.command[0] + ": " + e.what());
  }
  ::close(in[0]);
  ::close(out[1]);
  pid_ = process_->pid();
  reader_ = std::thread([this] { read_loop(); });
}

std::int64_t StdioUpstream::request(const std::string& method, json::object params, Reply reply,
                                    std::chrono::steady_clock::time_point deadline) {
  std::int64_t id = 0;
  bool earliest = false;
  {
    std::lock_guard lock(mutex_);
    if (ended_) {
      reply(std::nullopt, "the upstream server " + name_ + " has exited");
      return 0;
    }
    id = ++next_id_;
    earliest = std::all_of(pending_.begin(), pending_.end(),
                           [&](const auto& entry) { return entry.second.deadline > deadline; });
    pending_[id] = Pending{method, std::move(reply), deadline};
  }
  // The reader sleeps towards the earliest deadline: wake it for an earlier one.
  if (earliest && deadline != std::chrono::steady_clock::time_point::max()) wake_reader();
  write(jsonrpc::request_message(id, method, std::move(params)));
  return id;
}

bool StdioUpstream::forget(std::int64_t id, const std::string& why) {
  Reply reply;
  {
    std::lock_guard lock(mutex_);
    auto it = pending_.find(id);
    if (it == pending_.end()) return false;
    reply = std::move(it->second.reply);
    pending_.erase(it);
  }
  write(jsonrpc::notification_message("notifications/cancelled",
                                      json::object{{"requestId", id}, {"reason", why}}));
  reply(std::nullopt, why);
  return true;
}

json::object StdioUpstream::request_sync(const std::string& method, json::object params,
                                         std::chrono::steady_clock::time_point deadline) {
  auto promise = std::make_shared<std::promise<json::object>>();
  auto future = promise->get_future();
  request(method, std::move(params), [promise](std::optional<json::object> m, std::string error) {
    if (!m) {
      promise->set_exception(std::make_exception_ptr(std::runtime_error(error)));
    } else if (m->contains("error")) {
      promise->set_exception(std::make_exception_ptr(std::runtime_error(error_text(*m))));
    } else {
      const json::value* r = m->if_contains("result");
      promise->set_value(r && r->is_object() ? r->get_object() : json::object{});
    }
  });
  if (future.wait_until(deadline) != std::future_status::ready)
    throw std::runtime_error(method + " got no answer in time");
  return future.get();
}

void StdioUpstream::notify(const std::string& method) {
  write(jsonrpc::notification_message(method, nullptr));
}

std::function<void()> StdioUpstream::call_tool(const std::string& tool, json::value arguments,
                                               std::chrono::milliseconds timeout, Done done) {
  const std::int64_t id = request(
      "tools/call", json::object{{"name", tool}, {"arguments", std::move(arguments)}},
      [done](std::optional<json::object> m, std::string error) {
        if (!m) return done(std::nullopt, error);
        if (m->contains("error")) return done(std::nullopt, error_text(*m));
        const json::value* r = m->if_contains("result");
        done(r && r->is_object() ? std::optional<json::object>(r->get_object())
                                 : std::optional<json::object>(json::object{}),
             {});
      },
      std::chrono::steady_clock::now() + timeout);
  // A cancelled call leaves nothing behind: its entry goes now, not at its
  // deadline or never (a server that never answers).
  return [this, id] {
    if (id != 0) forget(id, "cancelled");
  };
}

void StdioUpstream::close() {
  {
    std::lock_guard lock(close_mutex_);
    if (closed_) return;
    closed_ = true;
  }
  {
    std::lock_guard lock(write_mutex_);
    if (to_child_ >= 0) ::close(to_child_);
    to_child_ = -1;
  }
  if (process_) {
    // Its whole tree gets SIGTERM, and SIGKILL if anything is still there
    // 2 s later; the unit is empty when this returns.
    const std::string exit = process_->stop(std::chrono::seconds(2));
    {
      std::lock_guard lock(mutex_);
      exit_ = exit;
    }
    process_.reset();
    pid_ = 0;
  }
  if (stop_[1] >= 0) {
    const char byte = 1;
    (void)!::write(stop_[1], &byte, 1);
  }
  if (reader_.joinable()) reader_.join();
  for (int* fd : {&from_child_, &stop_[0], &stop_[1]}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
  int wake = -1;
  {
    std::lock_guard lock(mutex_);  // wake_reader() reads it under the lock
    std::swap(wake, wake_);
  }
  if (wake >= 0) ::close(wake);
  fail_pending("the upstream server " + name_ + " was closed");
}

bool StdioUpstream::ended() {
  std::lock_guard lock(mutex_);
  return ended_;
}

std::string StdioUpstream::exit_text() {
  std::lock_guard lock(mutex_);
  return exit_;
}

void StdioUpstream::write(std::string message) {
  std::string line = std::move(message) + "\n";
  std::lock_guard lock(write_mutex_);
  // A server that exited (one that dies at start, say) makes the write
  // EPIPE; its SIGPIPE must not end this process, whatever the embedder's
  // disposition: blocked here, and a SIGPIPE this write raised consumed.
  sigset_t pipe_only, old, pending;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  bool broke = false;
  std::size_t at = 0;
  while (to_child_ >= 0 && at < line.size()) {
    const ssize_t n = ::write(to_child_, line.data() + at, line.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EPIPE) broke = true;
    if (n <= 0) break;
    at += static_cast<std::size_t>(n);
  }
  if (broke && !was_pending) {
    const timespec zero{};
    while (::sigtimedwait(&pipe_only, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void StdioUpstream::read_loop() noexcept {
  try {
    read_lines();
  } catch (const std::exception& e) {
    log_quietly("upstream " + name_ + ": the reader stopped: " + e.what());
  } catch (...) {
    log_quietly("upstream " + name_ + ": the reader stopped (not a std::exception)");
  }
  try {
    fail_pending("the upstream server " + name_ + " has exited");
  } catch (...) {
    log_quietly("upstream " + name_ + ": failing the calls still waiting threw");
  }
  try {
    if (on_end_) on_end_();
  } catch (...) {
    log_quietly("upstream " + name_ + ": its end could not be reported");
  }
}

void StdioUpstream::log_quietly(const std::string& message) noexcept {
  try {
    if (logger_) logger_(LogLevel::error, message);
  } catch (...) {  // a logger that throws: nothing left to tell
  }
}

void StdioUpstream::read_lines() {
  std::string buffer;
  char chunk[65536];
  while (true) {
    pollfd fds[3] = {{from_child_, POLLIN, 0}, {stop_[0], POLLIN, 0}, {wake_, POLLIN, 0}};
    const int wait = expire_overdue();
    const int ready = ::poll(fds, 3, wait);
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents) break;
    if (fds[2].revents) drain_wakes();
    if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    const ssize_t n = ::read(from_child_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buffer.append(chunk, static_cast<std::size_t>(n));
    std::size_t newline;
    while ((newline = buffer.find('\n')) != std::string::npos) {
      try {  // one bad message costs that message
        on_line(buffer.substr(0, newline));
      } catch (const std::exception& e) {
        log_quietly("upstream " + name_ + ": a message failed: " + e.what());
      } catch (...) {
        log_quietly("upstream " + name_ + ": a message failed (not a std::exception)");
      }
      buffer.erase(0, newline + 1);
    }
  }
}

void StdioUpstream::on_line(const std::string& line) {
  boost::system::error_code ec;
  bool replaced = false;
  json::value v = parse_upstream(line, ec, replaced);
  if (replaced && logger_)
    logger_(LogLevel::warn,
            "upstream " + name_ + " wrote bytes that are not UTF-8; they read as U+FFFD");
  if (ec || !v.is_object()) {
    if (logger_ && line.find_first_not_of(" \r\t") != std::string::npos)
      logger_(LogLevel::debug, "upstream " + name_ + " wrote a line that is not JSON-RPC");
    return;
  }
  json::object& m = v.get_object();
  const json::value* id = m.if_contains("id");
  const json::value* method = m.if_contains("method");
  if (method && id) {  // a request to us: we answer ping, nothing else
    if (method->is_string() && method->get_string() == "ping") {
      write(jsonrpc::result_message(*id, json::object{}));
    } else {
      write(jsonrpc::error_message(*id, jsonrpc::kMethodNotFound, "Method not found"));
    }
    return;
  }
  if (!id || !id->is_int64()) return;  // notifications and strays
  Reply reply;
  {
    std::lock_guard lock(mutex_);
    auto it = pending_.find(id->get_int64());
    if (it == pending_.end()) return;
    reply = std::move(it->second.reply);
    pending_.erase(it);
  }
  reply(std::move(m), m.contains("error") ? error_text(m) : std::string());
}

void StdioUpstream::fail_pending(const std::string& why) {
  std::map<std::int64_t, Pending> pending;
  {
    std::lock_guard lock(mutex_);
    ended_ = true;
    pending.swap(pending_);
  }
  for (auto& [id, entry] : pending) entry.reply(std::nullopt, why);
}

void StdioUpstream::wake_reader() {
  std::lock_guard lock(mutex_);
  const std::uint64_t one = 1;
  if (wake_ >= 0) (void)!::write(wake_, &one, sizeof one);
}

void StdioUpstream::drain_wakes() {
  std::uint64_t count = 0;
  (void)!::read(wake_, &count, sizeof count);
}

int StdioUpstream::expire_overdue() {
  using Clock = std::chrono::steady_clock;
  std::vector<std::pair<std::int64_t, Pending>> overdue;
  Clock::time_point next = Clock::time_point::max();
  const Clock::time_point now = Clock::now();
  {
    std::lock_guard lock(mutex_);
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->second.deadline <= now) {
        overdue.emplace_back(it->first, std::move(it->second));
        it = pending_.erase(it);
      } else {
        next = std::min(next, it->second.deadline);
        ++it;
      }
    }
  }
  for (auto& [id, entry] : overdue) {
    write(jsonrpc::notification_message("notifications/cancelled",
                                        json::object{{"requestId", id}, {"reason", "timed out"}}));
    entry.reply(std::nullopt,
                "the upstream server " + name_ + " did not answer " + entry.method + " in time");
  }
  if (next == Clock::time_point::max()) return -1;
  // Rounded up, so the reader never wakes just before a deadline.
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(next - Clock::now()).count();
  return static_cast<int>(std::clamp<std::int64_t>(ms, 0, 60'000));
}

}  // namespace corral::mcp::upstream_detail
