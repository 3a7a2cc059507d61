// The stdio transport: newline-delimited JSON-RPC on two file descriptors.
#include <errno.h>
#include <unistd.h>

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
  while (true) {
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
  if (!skipping && buffer.find_first_not_of(" \t\r") != std::string::npos)
    session->handle(buffer, stream);
  session->close();
  service.shutdown();
  return writer->broken() ? 1 : 0;
}

}  // namespace corral::mcp
