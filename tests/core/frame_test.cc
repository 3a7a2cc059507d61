#include "core/frame.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace corral::core {
namespace {

std::string framed(const std::string& body) {
  std::string out;
  const std::size_t start = open_frame(out);
  out += body;
  EXPECT_TRUE(seal_frame(out, start, kLargestFrame));
  return out;
}

TEST(FrameReader, HandsOutFramesSplitAnywhere) {
  const std::string stream = framed("first") + framed("") + framed(std::string(1000, 'x'));
  for (std::size_t step : {1u, 3u, 4u, 7u, 1000u}) {
    FrameReader reader(1 << 20);
    std::vector<std::string> bodies;
    for (std::size_t at = 0; at < stream.size(); at += step) {
      reader.append(stream.data() + at, std::min(step, stream.size() - at));
      std::string body;
      while (reader.next(body) == FrameReader::Status::frame) bodies.push_back(body);
    }
    ASSERT_EQ(bodies.size(), 3u) << step;
    EXPECT_EQ(bodies[0], "first");
    EXPECT_EQ(bodies[1], "");
    EXPECT_EQ(bodies[2], std::string(1000, 'x'));
  }
}

TEST(FrameReader, RefusesAnOversizedFrameByItsHeader) {
  FrameReader reader(16);
  char header[kFrameHeaderBytes];
  put_frame_length(header, 17);
  reader.append(header, sizeof header);
  std::string body;
  EXPECT_EQ(reader.next(body), FrameReader::Status::oversized);
  EXPECT_LE(reader.buffered_capacity(), 64u);  // nothing was reserved for it
}

// A channel that once carried a big answer must not hold its size for
// good: a pool's workers each did, 16 MiB apiece after a 10 MiB answer.
TEST(FrameReader, GivesBackABigFramesBufferOnceDrained) {
  FrameReader reader(32 << 20);
  const std::string big = framed(std::string(10 << 20, 'y'));
  for (std::size_t at = 0; at < big.size(); at += 65536) {
    reader.append(big.data() + at, std::min<std::size_t>(65536, big.size() - at));
  }
  EXPECT_GE(reader.buffered_capacity(), big.size());
  std::string body;
  ASSERT_EQ(reader.next(body), FrameReader::Status::frame);
  EXPECT_EQ(body.size(), std::size_t{10} << 20);
  EXPECT_LE(reader.buffered_capacity(), kKeptFrameBytes);
  // Small frames keep their buffer: no allocation per frame.
  const std::string small = framed(std::string(1024, 's'));
  reader.append(small.data(), small.size());
  ASSERT_EQ(reader.next(body), FrameReader::Status::frame);
  EXPECT_EQ(body, std::string(1024, 's'));
  const std::size_t kept = reader.buffered_capacity();
  EXPECT_GE(kept, small.size());
  reader.append(small.data(), small.size());
  ASSERT_EQ(reader.next(body), FrameReader::Status::frame);
  EXPECT_EQ(reader.buffered_capacity(), kept);
}

}  // namespace
}  // namespace corral::core
