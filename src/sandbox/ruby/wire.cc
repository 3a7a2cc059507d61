#include "sandbox/ruby/wire.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace corral::sandbox::ruby {

bool write_all(int fd, std::string_view bytes) noexcept {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool send_frame(int fd, Writer& frame) noexcept {
  return frame.seal() && write_all(fd, frame.bytes());
}

namespace {
bool read_exact(int fd, char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t got = ::read(fd, p, n);
    if (got == 0) return false;
    if (got < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}
}  // namespace

bool read_frame(int fd, std::string& body) noexcept {
  char header[core::kFrameHeaderBytes];
  if (!read_exact(fd, header, sizeof header)) return false;
  const std::uint32_t length = core::frame_length(header);
  if (length == 0 || length > kMaxFrame) return false;
  body.resize(length);
  return read_exact(fd, body.data(), length);
}

}  // namespace corral::sandbox::ruby
