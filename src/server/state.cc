#include "server/state.hpp"

#include <cstdio>

namespace corral::server {

void ServerState::log(LogLevel level, const std::string& message) const {
  if (options.logger) {
    options.logger(level, message);
    return;
  }
  if (level == LogLevel::warn || level == LogLevel::error) {
    std::fprintf(stderr, "corral server: %s\n", message.c_str());
  }
}

void ServerState::add(Session* key, std::weak_ptr<Session> session,
                      asio::any_io_executor executor) {
  std::lock_guard lock(mutex_);
  sessions_[key] = Entry{std::move(session), std::move(executor)};
}

void ServerState::remove(Session* key) {
  std::function<void()> notify;
  {
    std::lock_guard lock(mutex_);
    sessions_.erase(key);
    if (sessions_.empty() && on_empty_) notify = std::exchange(on_empty_, nullptr);
  }
  if (notify) notify();
}

void ServerState::for_each(std::function<void(Session&)> fn) {
  std::lock_guard lock(mutex_);
  for (auto& [key, entry] : sessions_) {
    asio::post(entry.executor, [weak = entry.session, fn] {
      if (auto session = weak.lock()) fn(*session);
    });
  }
}

std::size_t ServerState::live() const {
  std::lock_guard lock(mutex_);
  return sessions_.size();
}

void ServerState::when_empty(std::function<void()> fn) {
  {
    std::lock_guard lock(mutex_);
    if (!sessions_.empty()) {
      on_empty_ = std::move(fn);
      return;
    }
  }
  fn();
}

}  // namespace corral::server
