#include "server/state.hpp"

#include <fmt/format.h>

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

std::shared_ptr<void> ServerState::admit_connection(const std::string& remote, std::string& why) {
  Connections& c = *connections_;
  std::lock_guard lock(c.mutex);
  const std::size_t total_cap = options.max_connections;
  const std::size_t address_cap = options.max_connections_per_address;
  if (total_cap != 0 && c.total >= total_cap) {
    why = fmt::format("{} connections are open (the cap is {})", c.total, total_cap);
    return nullptr;
  }
  auto it = c.per_address.find(remote);
  const std::size_t mine = it == c.per_address.end() ? 0 : it->second;
  if (address_cap != 0 && mine >= address_cap) {
    why = fmt::format("{} connections from {} are open (the cap per address is {})", mine, remote,
                      address_cap);
    return nullptr;
  }
  ++c.total;
  ++c.per_address[remote];
  auto release = [counters = connections_, remote](void*) {
    {
      std::lock_guard lock(counters->mutex);
      --counters->total;
      auto found = counters->per_address.find(remote);
      if (found != counters->per_address.end() && --found->second == 0)
        counters->per_address.erase(found);
    }
    if (counters->released) counters->released();
  };
  return std::shared_ptr<void>(static_cast<void*>(connections_.get()), std::move(release));
}

std::size_t ServerState::connections() const {
  std::lock_guard lock(connections_->mutex);
  return connections_->total;
}

std::shared_ptr<void> ServerState::admit_run(const std::string& identity, std::string& why) {
  Runs& r = *runs_;
  std::lock_guard lock(r.mutex);
  const std::size_t cap = options.max_runs_per_identity;
  auto it = r.per_identity.find(identity);
  const std::size_t mine = it == r.per_identity.end() ? 0 : it->second;
  if (cap != 0 && mine >= cap) {
    why = fmt::format("{} runs of this identity are in flight (the cap per identity is {})", mine,
                      cap);
    return nullptr;
  }
  ++r.per_identity[identity];
  auto release = [counters = runs_, identity](void*) {
    std::lock_guard lock(counters->mutex);
    auto found = counters->per_identity.find(identity);
    if (found != counters->per_identity.end() && --found->second == 0)
      counters->per_identity.erase(found);
  };
  return std::shared_ptr<void>(static_cast<void*>(runs_.get()), std::move(release));
}

std::size_t ServerState::runs_of(const std::string& identity) const {
  std::lock_guard lock(runs_->mutex);
  auto it = runs_->per_identity.find(identity);
  return it == runs_->per_identity.end() ? 0 : it->second;
}

}  // namespace corral::server
