// src/sandbox/ruby/wire.hpp: the frames between a Ruby engine and its helper
// process.
//
// A frame is core/frame.hpp's (a 4-byte big-endian length, then the body);
// the body is a one-byte type and its fields. Integers are the host's byte
// order (both ends are this build), strings are a 4-byte length and their
// bytes. Both sides refuse a frame past kMaxFrame before buffering it, and
// neither sends one: send_frame refuses it first. Host -> helper:
//   setup  {u8 profile, u64 memory_limit|kNone, u64 stdout_limit|kNone,
//           u64 stderr_limit|kNone, u64 max_tool_calls|kNone,
//           u32 tools, str path.., u32 snippets, (str name, str code)..}
//   run    {u8 kind, str code, str entrypoint, str args_json}
//   answer {u8 ok, str payload}           JSON text, or an error message
// Helper -> host:
//   hello  {}                             locked down, ready for setup
//   out    {u8 channel, str bytes}        already capped by the helper
//   call   {u32 tool, str args_json}
//   done   {u8 code|kNoFailure, str message, str value, f64 cpu, u8 discard}
// The helper's counters (memory peak, bytes offered, tool calls) live in a
// shared page (Counters) so that the host can read them after killing it.
//
// Nothing here throws or locks: the helper runs it under a seccomp filter,
// and a pooled worker's inline engine uses the same types.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "core/frame.hpp"

namespace corral::sandbox::ruby {

inline constexpr std::uint64_t kNone = ~std::uint64_t{0};
inline constexpr std::uint8_t kNoFailure = 0xFF;
inline constexpr std::size_t kMaxFrame = std::size_t{256} << 20;

enum class Frame : std::uint8_t { setup = 1, run, answer, out, call, done, hello };

// The helper program's first argument: a helper from another corral build
// (another frame layout) refuses to start instead of misreading frames.
inline constexpr char kHelperProtocol[] = "corral-ruby-helper/3";

// Counters: one shared page per helper, written by the helper during a run
// and read by the host at its end, whichever way it ended.
struct Counters {
  std::atomic<std::uint64_t> memory_peak{0};
  std::atomic<std::uint64_t> offered_stdout{0};
  std::atomic<std::uint64_t> offered_stderr{0};
  std::atomic<std::uint64_t> tool_calls{0};
  std::atomic<std::uint32_t> stdout_truncated{0};
  std::atomic<std::uint32_t> stderr_truncated{0};
  std::atomic<std::uint64_t> cpu_ns_at_start{0};

  void reset() {
    memory_peak = 0;
    offered_stdout = 0;
    offered_stderr = 0;
    tool_calls = 0;
    stdout_truncated = 0;
    stderr_truncated = 0;
  }
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

// The most a frame's variable part may take so that the frame fits: what
// the guest sends (a value, a tool's argument) is held under it, and output
// goes out in pieces of at most kOutputPiece.
inline constexpr std::size_t kFrameRoom = kMaxFrame - 64 * 1024;
inline constexpr std::size_t kOutputPiece = std::size_t{1} << 20;

// Writer: builds one frame.
class Writer {
 public:
  explicit Writer(Frame type) {
    core::open_frame(bytes_);
    u8(static_cast<std::uint8_t>(type));
  }
  Writer& u8(std::uint8_t v) {
    bytes_.push_back(static_cast<char>(v));
    return *this;
  }
  Writer& u32(std::uint32_t v) { return raw(&v, sizeof v); }
  Writer& u64(std::uint64_t v) { return raw(&v, sizeof v); }
  Writer& f64(double v) { return raw(&v, sizeof v); }
  Writer& str(std::string_view s) {
    u32(static_cast<std::uint32_t>(s.size()));
    bytes_.append(s.data(), s.size());
    return *this;
  }
  // The body's size so far (type and fields).
  std::size_t body_size() const noexcept { return core::frame_body_size(bytes_, 0); }
  // Fills in the length; false when the body is past kMaxFrame (the frame
  // must not be sent).
  bool seal() noexcept { return core::seal_frame(bytes_, 0, kMaxFrame); }
  const std::string& bytes() const noexcept { return bytes_; }

 private:
  Writer& raw(const void* p, std::size_t n) {
    bytes_.append(static_cast<const char*>(p), n);
    return *this;
  }
  std::string bytes_;
};

// Reader: reads the fields of one frame body; any read past the end turns
// ok() false and yields zeros.
class Reader {
 public:
  explicit Reader(std::string_view body) : rest_(body) {}
  bool ok() const noexcept { return ok_; }
  bool at_end() const noexcept { return rest_.empty(); }
  std::uint8_t u8() {
    std::uint8_t v = 0;
    raw(&v, sizeof v);
    return v;
  }
  std::uint32_t u32() {
    std::uint32_t v = 0;
    raw(&v, sizeof v);
    return v;
  }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    raw(&v, sizeof v);
    return v;
  }
  double f64() {
    double v = 0;
    raw(&v, sizeof v);
    return v;
  }
  std::string_view str() {
    const std::uint32_t n = u32();
    if (!ok_ || n > rest_.size()) {
      ok_ = false;
      return {};
    }
    std::string_view s = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return s;
  }

 private:
  void raw(void* p, std::size_t n) {
    if (!ok_ || rest_.size() < n) {
      ok_ = false;
      return;
    }
    std::memcpy(p, rest_.data(), n);
    rest_.remove_prefix(n);
  }
  std::string_view rest_;
  bool ok_ = true;
};

// Blocking I/O on a stream socket, EINTR-safe. write_all never raises
// SIGPIPE. send_frame seals and writes `frame`: false when it is past
// kMaxFrame (nothing written) or the write failed. read_frame returns false
// on EOF, error, an empty or an oversized frame.
bool write_all(int fd, std::string_view bytes) noexcept;
bool send_frame(int fd, Writer& frame) noexcept;
bool read_frame(int fd, std::string& body) noexcept;

}  // namespace corral::sandbox::ruby
