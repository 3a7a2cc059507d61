#include "pool/startup_pages.hpp"

#include <fcntl.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>

// No allocation, no stdio, no locale: the reaper calls this in the child of
// a fork, where only async-signal-safe calls are its rule (lockdown.cc).
namespace corral::pool {
namespace {

// /proc/self/smaps a line at a time, through a fixed buffer; a line longer
// than the caller's room is cut (only a path can be that long, and only its
// first character is read).
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}

  bool next(char* line, std::size_t room) {
    std::size_t n = 0;
    for (;;) {
      if (pos_ == len_) {
        ssize_t got;
        do {
          got = ::read(fd_, buffer_, sizeof buffer_);
        } while (got < 0 && errno == EINTR);
        if (got <= 0) {
          line[n] = '\0';
          return n > 0;
        }
        len_ = static_cast<std::size_t>(got);
        pos_ = 0;
      }
      const char c = buffer_[pos_++];
      if (c == '\n') break;
      if (n + 1 < room) line[n++] = c;
    }
    line[n] = '\0';
    return true;
  }

 private:
  int fd_;
  char buffer_[8192];
  std::size_t len_ = 0;
  std::size_t pos_ = 0;
};

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

const char* parse_hex(const char* p, std::uintptr_t& out) {
  out = 0;
  const char* start = p;
  for (int d; (d = hex_digit(*p)) >= 0; ++p) out = out * 16 + static_cast<std::uintptr_t>(d);
  return p == start ? nullptr : p;
}

const char* skip_field(const char* p) {
  while (*p == ' ') ++p;
  while (*p && *p != ' ') ++p;
  return p;
}

struct Mapping {
  std::uintptr_t start = 0;
  std::uintptr_t end = 0;
  bool candidate = false;  // read-only, private, file-backed
  std::uint64_t rss_kib = 0;
  std::uint64_t anonymous_kib = 0;
};

// "7f0000000000-7f0000001000 r-xp 00000000 08:01 1234   /usr/lib/x.so"
bool parse_header(const char* line, Mapping& m) {
  std::uintptr_t start = 0, end = 0;
  const char* p = parse_hex(line, start);
  if (!p || *p != '-') return false;
  p = parse_hex(p + 1, end);
  if (!p || *p != ' ') return false;
  const char* perms = p + 1;
  for (int i = 0; i < 4; ++i)
    if (!perms[i]) return false;
  p = skip_field(perms);  // perms
  p = skip_field(p);      // offset
  p = skip_field(p);      // device
  p = skip_field(p);      // inode
  while (*p == ' ') ++p;
  m = Mapping{start, end};
  m.candidate = perms[0] == 'r' && perms[1] == '-' && perms[3] == 'p' && *p == '/';
  return true;
}

// The kB figure of "Name:   123 kB" when `line` starts with `name`.
bool field_kib(const char* line, const char* name, std::uint64_t& out) {
  for (; *name; ++name, ++line)
    if (*line != *name) return false;
  while (*line == ' ') ++line;
  out = 0;
  for (; *line >= '0' && *line <= '9'; ++line)
    out = out * 10 + static_cast<std::uint64_t>(*line - '0');
  return true;
}

void drop(const Mapping& m, DroppedPages& out) {
  if (!m.candidate || m.rss_kib == 0 || m.anonymous_kib != 0) return;
  if (::madvise(reinterpret_cast<void*>(m.start), m.end - m.start, MADV_DONTNEED) != 0) return;
  ++out.mappings;
  out.bytes += m.rss_kib * 1024;
}

}  // namespace

DroppedPages drop_startup_pages(bool trim_malloc) {
  DroppedPages out;
  int fd;
  do {
    fd = ::open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return out;
  // MADV_DONTNEED leaves the mappings as they are, so dropping while the
  // file is still being read changes nothing of what follows.
  LineReader reader(fd);
  char line[512];
  Mapping current;
  bool open = false;
  while (reader.next(line, sizeof line)) {
    Mapping next;
    std::uint64_t kib = 0;
    if (hex_digit(line[0]) >= 0 && parse_header(line, next)) {
      if (open) drop(current, out);
      current = next;
      open = true;
    } else if (field_kib(line, "Rss:", kib)) {
      current.rss_kib = kib;
    } else if (field_kib(line, "Anonymous:", kib)) {
      current.anonymous_kib = kib;
    }
  }
  if (open) drop(current, out);
  ::close(fd);
  if (trim_malloc) ::malloc_trim(0);
  return out;
}

}  // namespace corral::pool
