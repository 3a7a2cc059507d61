// src/process/capture.cc: bounded capture of stdout and stderr.
#include "process/capture.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/utf8.hpp"

namespace corral::process {

namespace {
// One call moves at most this much before returning to the event loop, so a
// flooding stream cannot starve the other one or the deadline check.
constexpr std::uint64_t kFairnessCap = 4 << 20;
constexpr size_t kChunk = 64 * 1024;
}  // namespace

OutputCapture::ReadResult OutputCapture::read_from(int fd, Stream stream) {
  std::string& text = stream == Stream::out ? stdout_text : stderr_text;
  bool& truncated = stream == Stream::out ? stdout_truncated : stderr_truncated;
  std::uint64_t moved = 0;
  char buffer[kChunk];
  while (moved < kFairnessCap) {
    if (retained() >= budget_) return discard(fd, stream);
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return ReadResult::again;
      return ReadResult::eof;  // a broken pipe is an ending, not an error
    }
    if (n == 0) return ReadResult::eof;
    auto got = static_cast<std::uint64_t>(n);
    total_bytes += got;
    moved += got;
    std::uint64_t room = budget_ - retained();
    std::uint64_t keep = std::min(room, got);
    text.append(buffer, static_cast<size_t>(keep));
    if (keep < got) truncated = true;
  }
  return ReadResult::again;
}

void OutputCapture::finish() {
  // A truncated stream kept nothing after its cut (retained text only grows
  // and the budget stays full), so a character split at its end was split by
  // the budget, not by the command: it is dropped, not replaced.
  if (stdout_truncated) stdout_text.resize(core::utf8_complete(stdout_text));
  if (stderr_truncated) stderr_text.resize(core::utf8_complete(stderr_text));
  stdout_replaced = core::replace_invalid_utf8(stdout_text);
  stderr_replaced = core::replace_invalid_utf8(stderr_text);
  auto cut = [](std::string& text, std::uint64_t keep, bool& truncated) {
    if (text.size() <= keep) return;
    text.resize(core::utf8_cut(text, static_cast<std::size_t>(keep)));
    truncated = true;
  };
  if (retained() > budget_) {
    cut(stderr_text, budget_ - std::min<std::uint64_t>(budget_, stdout_text.size()),
        stderr_truncated);
    cut(stdout_text, budget_, stdout_truncated);
  }
}

OutputCapture::ReadResult OutputCapture::discard(int fd, Stream stream) {
  bool& truncated = stream == Stream::out ? stdout_truncated : stderr_truncated;
  if (!null_) null_ = UniqueFd(::open("/dev/null", O_WRONLY | O_CLOEXEC));
  std::uint64_t moved = 0;
  while (moved < kFairnessCap) {
    ssize_t n =
        null_ ? ::splice(fd, nullptr, null_.get(), nullptr, 1 << 20, SPLICE_F_NONBLOCK) : -1;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return ReadResult::again;
    if (n < 0) {
      // No splice: read and drop.
      char buffer[kChunk];
      n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return ReadResult::again;
      if (n < 0) return ReadResult::eof;
    }
    if (n == 0) return ReadResult::eof;
    total_bytes += static_cast<std::uint64_t>(n);
    moved += static_cast<std::uint64_t>(n);
    truncated = true;
  }
  return ReadResult::again;
}

}  // namespace corral::process
