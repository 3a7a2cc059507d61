// The stdio transport: newline-delimited JSON-RPC on two file descriptors.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>

#include <memory>
#include <mutex>
#include <string>

#include "mcp/session.hpp"

namespace corral::mcp {

namespace {

// Longest message accepted on stdin; a longer line is answered with a parse
// error and skipped.
constexpr std::size_t kMaxLine = std::size_t{16} << 20;

// Writer: one message a line; writes never interleave.
class Writer {
 public:
  explicit Writer(int fd) : fd_(fd) {}
  void write(std::string message) {
    message += '\n';
    std::lock_guard lock(mutex_);
    if (broken_) return;
    std::size_t at = 0;
    while (at < message.size()) {
      const ssize_t n = ::write(fd_, message.data() + at, message.size() - at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        broken_ = true;
        return;
      }
      at += static_cast<std::size_t>(n);
    }
  }
  bool broken() {
    std::lock_guard lock(mutex_);
    return broken_;
  }

 private:
  int fd_;
  std::mutex mutex_;
  bool broken_ = false;
};

class LineStream : public Stream {
 public:
  explicit LineStream(std::shared_ptr<Writer> writer) : writer_(std::move(writer)) {}
  void send(std::string message) override { writer_->write(std::move(message)); }
  void finish(std::optional<std::string> response) override {
    if (response) writer_->write(std::move(*response));
  }

 private:
  std::shared_ptr<Writer> writer_;
};

// SIGTERM and SIGINT while serve_stdio reads: the handler writes a byte to a
// pipe the read loop polls, so the loop ends as at end of file and every call
// in flight is answered before the process goes. The handler resets itself
// (SA_RESETHAND): a second signal has the default effect and ends the process.
std::atomic<int> g_signal_pipe{-1};

void on_stop_signal(int) {
  const int saved = errno;
  const int fd = g_signal_pipe.load();
  if (fd >= 0) {
    const char byte = 1;
    [[maybe_unused]] const ssize_t n = ::write(fd, &byte, 1);
  }
  errno = saved;
}

class StopSignals {
 public:
  StopSignals() {
    if (::pipe2(fds_, O_CLOEXEC | O_NONBLOCK) != 0) {
      fds_[0] = fds_[1] = -1;
      return;
    }
    int expected = -1;
    if (!g_signal_pipe.compare_exchange_strong(expected, fds_[1])) return;  // another serve_stdio
    owner_ = true;
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND | SA_RESTART;
    for (int i = 0; i < 2; ++i) {
      sigaction(kSignals[i], nullptr, &previous_[i]);
      // A signal the caller ignores stays ignored.
      if (previous_[i].sa_handler != SIG_IGN)
        installed_[i] = sigaction(kSignals[i], &action, nullptr) == 0;
    }
  }
  ~StopSignals() {
    if (owner_) {
      for (int i = 0; i < 2; ++i)
        if (installed_[i]) sigaction(kSignals[i], &previous_[i], nullptr);
      g_signal_pipe.store(-1);
    }
    for (int fd : fds_)
      if (fd >= 0) ::close(fd);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  // The fd that becomes readable on a signal, or -1.
  int fd() const { return owner_ ? fds_[0] : -1; }

 private:
  static constexpr int kSignals[2] = {SIGTERM, SIGINT};
  int fds_[2] = {-1, -1};
  bool owner_ = false;
  bool installed_[2] = {false, false};
  struct sigaction previous_[2]{};
};

}  // namespace

int serve_stdio(Service& service, int in_fd, int out_fd) {
  auto writer = std::make_shared<Writer>(out_fd);
  // The session holds the service through a non-owning pointer: the caller
  // owns it and outlives this function.
  auto session = std::make_shared<Session>(std::shared_ptr<Service>(&service, [](Service*) {}));
  session->set_background([writer](std::string message) { writer->write(std::move(message)); });
  auto stream = std::make_shared<LineStream>(writer);
  std::string buffer;
  bool skipping = false;  // inside a line longer than kMaxLine
  char chunk[65536];
  StopSignals signals;
  bool stopped = false;  // by a signal
  while (true) {
    if (signals.fd() >= 0) {
      pollfd fds[2] = {{in_fd, POLLIN, 0}, {signals.fd(), POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        break;
      }
      if (fds[1].revents != 0) {
        stopped = true;
        break;
      }
    }
    const ssize_t n = ::read(in_fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    std::size_t start = 0;
    for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
      if (chunk[i] != '\n') continue;
      if (!skipping) {
        buffer.append(chunk + start, i - start);
        if (!buffer.empty() && buffer.back() == '\r') buffer.pop_back();
        if (buffer.find_first_not_of(" \t") != std::string::npos) session->handle(buffer, stream);
      }
      skipping = false;
      buffer.clear();
      start = i + 1;
    }
    if (!skipping) buffer.append(chunk + start, static_cast<std::size_t>(n) - start);
    if (!skipping && buffer.size() > kMaxLine) {
      stream->finish(error_message(nullptr, kParseError,
                                   "Parse error: the message is longer than the 16 MiB limit."));
      buffer.clear();
      skipping = true;
    }
  }
  if (!stopped && !skipping && buffer.find_first_not_of(" \t\r") != std::string::npos)
    session->handle(buffer, stream);
  // Calls still running are answered (retryable: another server may take
  // them), then stopped.
  session->close(Failure{FailureCode::unavailable,
                         stopped ? "corral mcp is stopping (a signal): this call was stopped "
                                   "before it finished; retry it on a running server."
                                 : "corral mcp is stopping (its input ended): this call was "
                                   "stopped before it finished; retry it on a running server.",
                         nullptr});
  service.shutdown();
  return writer->broken() ? 1 : 0;
}

}  // namespace corral::mcp
