// src/core/frame.hpp: the one framing of corral's IPC channels: the pool and
// its workers (a JSON object per frame, pool/frames.hpp) and a Ruby engine
// and its helper process (a binary record per frame, sandbox/ruby/wire.hpp).
//
// A frame is a 4-byte big-endian length, then that many bytes. Each channel
// has a limit; a sender checks its body against it before writing
// (seal_frame), a reader before buffering (FrameReader, frame_length), so
// neither side ever sends what the other must refuse.
//
// The header functions allocate nothing, throw nothing and take no lock:
// the Ruby helper runs them under its seccomp filter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace corral::core {

inline constexpr std::size_t kFrameHeaderBytes = 4;
// What a 4-byte length can say: no channel's limit may be larger.
inline constexpr std::size_t kLargestFrame = 0xffffffffu;

inline void put_frame_length(char* header, std::uint32_t length) noexcept {
  header[0] = static_cast<char>((length >> 24) & 0xff);
  header[1] = static_cast<char>((length >> 16) & 0xff);
  header[2] = static_cast<char>((length >> 8) & 0xff);
  header[3] = static_cast<char>(length & 0xff);
}

inline std::uint32_t frame_length(const char* header) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(header);
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

// Starts a frame at the end of `out`: its header, filled in by seal_frame.
// Returns where the frame starts.
inline std::size_t open_frame(std::string& out) {
  const std::size_t start = out.size();
  out.append(kFrameHeaderBytes, '\0');
  return start;
}

// The body of the frame opened at `start` (everything after its header).
inline std::size_t frame_body_size(const std::string& out, std::size_t start) noexcept {
  return out.size() - start - kFrameHeaderBytes;
}

// Fills in the header of the frame opened at `start`. False, header left
// empty, when the body is longer than `max_frame` (or than a length can
// say): the caller sends something else.
inline bool seal_frame(std::string& out, std::size_t start, std::size_t max_frame) noexcept {
  const std::size_t body = frame_body_size(out, start);
  if (body > max_frame || body > kLargestFrame) return false;
  put_frame_length(out.data() + start, static_cast<std::uint32_t>(body));
  return true;
}

// Why a frame of `size` bytes is not sent, in one wording for every
// channel: "<what> is N bytes as a frame, more than <limit_name> of M bytes".
inline std::string frame_too_large(std::string_view what, std::size_t size,
                                   std::string_view limit_name, std::size_t limit) {
  std::string text(what);
  text += " is " + std::to_string(size) + " bytes as a frame, more than ";
  text += limit_name;
  text += " of " + std::to_string(limit) + " bytes";
  return text;
}

// What a channel's buffer may keep between frames: enough for the usual
// small ones, never a large answer's worth (a drained reader frees more).
inline constexpr std::size_t kKeptFrameBytes = 64 * 1024;

// FrameReader: collects bytes as they arrive and hands out whole frame
// bodies, refusing a frame past `max_frame` by its header alone.
class FrameReader {
 public:
  explicit FrameReader(std::size_t max_frame) : max_frame_(max_frame) {}

  void append(const char* data, std::size_t size) { buffer_.append(data, size); }

  enum class Status { frame, need_more, oversized };
  // On `frame`, `body` holds the next frame's bytes.
  Status next(std::string& body);

  // What the reader holds allocated between frames (bytes of capacity).
  std::size_t buffered_capacity() const noexcept { return buffer_.capacity(); }

 private:
  void compact();

  std::size_t max_frame_;
  std::string buffer_;
  std::size_t consumed_ = 0;
};

}  // namespace corral::core
