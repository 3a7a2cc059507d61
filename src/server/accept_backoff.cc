#include "server/accept_backoff.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/error.hpp>
#include <cerrno>

namespace corral::server {

namespace {

constexpr std::chrono::milliseconds kFirstDelay{10};
constexpr std::chrono::milliseconds kMaxDelay{1000};
constexpr std::chrono::seconds kLogInterval{10};

}  // namespace

AcceptBackoff::AcceptBackoff(std::string listener, std::function<void(const std::string&)> warn)
    : listener_(std::move(listener)), warn_(std::move(warn)) {
  reopen_spare();
}

AcceptBackoff::~AcceptBackoff() {
  if (spare_ >= 0) ::close(spare_);
}

bool AcceptBackoff::exhausted(const boost::system::error_code& ec) {
  if (ec.category() != boost::system::system_category()) return false;
  const int value = ec.value();
  return value == EMFILE || value == ENFILE || value == ENOBUFS || value == ENOMEM;
}

bool AcceptBackoff::pending(int listen_fd) {
  pollfd ready{listen_fd, POLLIN, 0};
  return ::poll(&ready, 1, 0) == 1 && (ready.revents & POLLIN) != 0;
}

const std::string& AcceptBackoff::refusal() {
  static const std::string text = [] {
    const std::string body =
        R"({"error":"Service Unavailable: the server is out of file descriptors; retry later."})";
    return fmt::format(
        "HTTP/1.1 503 Service Unavailable\r\nServer: corral\r\nContent-Type: application/json\r\n"
        "Retry-After: 1\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{}",
        body.size(), body);
  }();
  return text;
}

void AcceptBackoff::reopen_spare() {
  if (spare_ < 0) spare_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
}

AcceptBackoff::Refusal AcceptBackoff::refuse_one(int listen_fd) {
  // A spare lost to another thread (it took the freed slot between our
  // close and accept) is taken back as soon as a slot is free again: without
  // this, every caller until the exhaustion ended was left hanging.
  reopen_spare();
  if (spare_ < 0) return Refusal::impossible;
  // Only when a connection is pending: accept4 on a listener that is not
  // readable could block (asio leaves the descriptor blocking until its
  // first asynchronous operation) and would gain nothing.
  if (!pending(listen_fd)) return Refusal::nothing_pending;
  ::close(spare_);
  spare_ = -1;
  const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd >= 0) {
    // Take what the client already sent (so close() does not answer with a
    // reset that could discard the 503 before the client reads it), answer,
    // close.
    char sink[16384];
    while (::recv(fd, sink, sizeof sink, MSG_DONTWAIT) > 0) {
    }
    const std::string& answer = refusal();
    [[maybe_unused]] const ssize_t sent =
        ::send(fd, answer.data(), answer.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    ::shutdown(fd, SHUT_WR);
    ::close(fd);
    ++refused_;
    ++refused_total_;
  }
  reopen_spare();
  // Accepting failed with the slot freed (another thread took it, or the
  // connection was reset meanwhile): the listener may stay readable, so only
  // a delay keeps the loop from spinning.
  return fd >= 0 && spare_ >= 0 ? Refusal::refused : Refusal::impossible;
}

AcceptBackoff::Retry AcceptBackoff::failed(int listen_fd, const boost::system::error_code& ec) {
  const auto now = std::chrono::steady_clock::now();
  if (!in_episode_) {
    in_episode_ = true;
    episode_start_ = now;
    failures_ = 0;
    refused_ = 0;
    delay_ = kFirstDelay;
    episode_logged_ = !ever_logged_ || now - last_log_ >= kLogInterval;
    if (episode_logged_) {
      ever_logged_ = true;
      last_log_ = now;
      std::string line = fmt::format(
          "{} accept failed: {}; backing off (connections are refused with 503 while "
          "descriptors are exhausted; without a spare descriptor, retrying every 10 ms to 1 s)",
          listener_, ec.message());
      if (silent_episodes_ > 0) {
        line += fmt::format(" [{} earlier episodes not logged]", silent_episodes_);
        silent_episodes_ = 0;
      }
      if (warn_) warn_(line);
    } else {
      ++silent_episodes_;
    }
  }
  ++failures_;
  const int value = ec.value();
  if (value == EMFILE || value == ENFILE) {
    switch (refuse_one(listen_fd)) {
      case Refusal::refused:
        return {Retry::Kind::now, {}};
      case Refusal::nothing_pending:
        return {Retry::Kind::when_readable, {}};
      case Refusal::impossible:
        break;
    }
  }
  const std::chrono::milliseconds wait = delay_;
  delay_ = std::min(delay_ * 2, kMaxDelay);
  return {Retry::Kind::after_delay, wait};
}

void AcceptBackoff::succeeded() {
  if (!in_episode_) return;
  in_episode_ = false;
  reopen_spare();
  if (!episode_logged_ || !warn_) return;
  const auto lasted = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - episode_start_);
  warn_(
      fmt::format("{} accept recovered after {} ms: {} failed accepts, {} connections refused "
                  "with 503",
                  listener_, lasted.count(), failures_, refused_));
}

}  // namespace corral::server
