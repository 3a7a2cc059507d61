// src/process/fd.cc: file descriptor helpers.
#include "process/fd.hpp"

#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace corral::process {

std::string errno_message(const std::string& what, int error) {
  return what + ": " + std::strerror(error);
}

namespace {

// Moves `fd` to a number >= 3, keeping O_CLOEXEC.
int lift_fd(int fd) {
  if (fd >= 3) return fd;
  int lifted = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  int error = errno;
  ::close(fd);
  if (lifted < 0) throw std::system_error(error, std::generic_category(), "fcntl");
  return lifted;
}

}  // namespace

void make_pipe(UniqueFd& read_end, UniqueFd& write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw std::system_error(errno, std::generic_category(), "pipe2");
  }
  UniqueFd r(fds[0]);
  UniqueFd w(fds[1]);
  r = UniqueFd(lift_fd(r.release()));
  w = UniqueFd(lift_fd(w.release()));
  read_end = std::move(r);
  write_end = std::move(w);
}

std::string read_small_file(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return {};
  std::string out;
  char buffer[4096];
  for (;;) {
    ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

int write_file(const std::string& path, const std::string& text) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) return errno;
  ssize_t n = ::write(fd.get(), text.data(), text.size());
  if (n < 0) return errno;
  return 0;
}

}  // namespace corral::process
