// apps/corral/call_slots.cc: see call_slots.hpp.
#include "call_slots.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace corral::app {

namespace {

std::string hex(std::uint64_t n) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(n));
  return text;
}

// FNV-1a 64: a file name per manifest, not a secret.
std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

// The slot directory, made if missing; empty (with `why`) when it is not a
// directory of ours that no one else can write: another user who planted it
// could otherwise hold our slots or read our lock names.
std::string slot_directory(std::string& why) {
  const uid_t uid = ::getuid();
  std::string dir;
  if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime != nullptr && *runtime == '/') {
    dir = std::string(runtime) + "/corral-slots";
  } else {
    dir = "/tmp/corral-slots-" + std::to_string(uid);
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    why = "cannot make " + dir + ": " + std::strerror(errno);
    return "";
  }
  struct stat info {};
  if (::lstat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode) || info.st_uid != uid ||
      (info.st_mode & 022) != 0) {
    why = dir + " is not a directory of this user's that others cannot write";
    return "";
  }
  return dir;
}

}  // namespace

SharedSlot::~SharedSlot() {
  if (fd_ >= 0) ::close(fd_);
}

SharedSlot::Result SharedSlot::take(const std::string& key, int slots,
                                    std::optional<SharedSlot>& slot, std::string& why) {
  const std::string dir = slot_directory(why);
  if (dir.empty()) return Result::unshared;
  const std::string stem = dir + "/" + hex(fnv1a(key)) + ".";
  for (int i = 0; i < slots; ++i) {
    const std::string path = stem + std::to_string(i) + ".lock";
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
      why = "cannot open " + path + ": " + std::strerror(errno);
      return Result::unshared;
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      slot.emplace(SharedSlot(fd, i));
      return Result::taken;
    }
    const int error = errno;
    ::close(fd);
    if (error != EWOULDBLOCK) {
      why = "cannot lock " + path + ": " + std::strerror(error);
      return Result::unshared;
    }
  }
  return Result::busy;
}

}  // namespace corral::app
