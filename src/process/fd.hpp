// src/process/fd.hpp: an owned file descriptor and small syscall helpers.
#pragma once

#include <unistd.h>

#include <string>
#include <utility>

namespace corral::process {

// UniqueFd: owns one file descriptor; closes it on destruction. Move-only.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(std::exchange(other.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  int release() noexcept { return std::exchange(fd_, -1); }
  void reset(int fd = -1) noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// "what: strerror(errno)"
std::string errno_message(const std::string& what, int error);

// A pipe whose both ends are O_CLOEXEC and numbered 3 or above (so a child
// can dup2 them onto 0..2 without clashing). Throws std::system_error.
void make_pipe(UniqueFd& read_end, UniqueFd& write_end);

// Reads a whole small file (cgroup files, /proc); empty on error.
std::string read_small_file(const std::string& path);

// Writes `text` to an existing file; returns errno (0 on success).
int write_file(const std::string& path, const std::string& text);

}  // namespace corral::process
