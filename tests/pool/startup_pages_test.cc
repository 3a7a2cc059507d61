// drop_startup_pages: what a starting worker gives back, and what it must
// never lose.
#include "pool/startup_pages.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace {

using corral::pool::drop_startup_pages;

// The Rss and Anonymous kB smaps gives the mapping that starts at `start`.
struct Resident {
  long rss_kib = -1;
  long anonymous_kib = -1;
};
Resident resident_at(const void* start) {
  std::ifstream smaps("/proc/self/smaps");
  std::ostringstream header;
  header << std::hex << reinterpret_cast<std::uintptr_t>(start) << "-";
  Resident out;
  bool inside = false;
  std::string line;
  while (std::getline(smaps, line)) {
    if (line.rfind(header.str(), 0) == 0) {
      inside = true;
    } else if (inside && line.rfind("Rss:", 0) == 0) {
      out.rss_kib = std::atol(line.c_str() + 4);
    } else if (inside && line.rfind("Anonymous:", 0) == 0) {
      out.anonymous_kib = std::atol(line.c_str() + 10);
      break;
    }
  }
  return out;
}

// A file of `pages` pages of `fill`, unlinked; its descriptor.
int page_file(std::size_t pages, char fill) {
  char path[] = "/tmp/corral-startup-pages-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return -1;
  unlink(path);
  const std::string text(pages * 4096, fill);
  if (write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) return -1;
  return fd;
}

constexpr std::size_t kPages = 16;

TEST(StartupPages, AReadOnlyFileMappingThatWasReadIsGivenBackAndReadsTheSameAfter) {
  const int fd = page_file(kPages, 'c');
  ASSERT_GE(fd, 0);
  auto* map = static_cast<const char*>(mmap(nullptr, kPages * 4096, PROT_READ, MAP_PRIVATE, fd, 0));
  ASSERT_NE(map, MAP_FAILED);
  long sum = 0;
  for (std::size_t i = 0; i < kPages; ++i) sum += map[i * 4096];
  EXPECT_EQ(sum, static_cast<long>(kPages) * 'c');
  ASSERT_EQ(resident_at(map).rss_kib, static_cast<long>(kPages * 4));

  const corral::pool::DroppedPages dropped = drop_startup_pages(true);
  EXPECT_GE(dropped.mappings, 1u);
  EXPECT_GE(dropped.bytes, kPages * 4096);
  EXPECT_EQ(resident_at(map).rss_kib, 0);
  // Faulted back in from the file: the same bytes.
  for (std::size_t i = 0; i < kPages; ++i) ASSERT_EQ(map[i * 4096 + 7], 'c') << i;
  munmap(const_cast<char*>(map), kPages * 4096);
  close(fd);
}

// A private mapping written before it was made read-only (what relocations
// do to .data.rel.ro) holds pages of its own: dropping them would bring the
// file's bytes back. It is left alone.
TEST(StartupPages, AMappingWithPagesOfItsOwnKeepsThem) {
  const int fd = page_file(kPages, 'f');
  ASSERT_GE(fd, 0);
  auto* map =
      static_cast<char*>(mmap(nullptr, kPages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0));
  ASSERT_NE(map, MAP_FAILED);
  for (std::size_t i = 0; i < kPages; ++i) map[i * 4096] = 'w';
  ASSERT_EQ(mprotect(map, kPages * 4096, PROT_READ), 0);
  ASSERT_GT(resident_at(map).anonymous_kib, 0);

  drop_startup_pages(false);
  EXPECT_EQ(resident_at(map).rss_kib, static_cast<long>(kPages * 4));
  for (std::size_t i = 0; i < kPages; ++i) ASSERT_EQ(map[i * 4096], 'w') << i;
  munmap(map, kPages * 4096);
  close(fd);
}

// This test program's own code and libraries go back too, and it runs on.
TEST(StartupPages, TheProgramsOwnCodeGoesBackAndItRunsOn) {
  const corral::pool::DroppedPages first = drop_startup_pages(true);
  EXPECT_GT(first.mappings, 2u);  // at least this binary, libc and libstdc++
  std::ostringstream text;
  text << "still " << 42;
  EXPECT_EQ(text.str(), "still 42");
}

}  // namespace
