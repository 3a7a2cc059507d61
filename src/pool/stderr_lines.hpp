// src/pool/stderr_lines.hpp: a worker's fd 2 as bounded UTF-8 lines.
//
// A worker is untrusted, and so is what it writes to stderr: lines are cut
// at kMaxLine bytes (between characters, marked " [cut]"), the whole stream
// at `limit` bytes (one line then says the rest was dropped), and every line
// is made valid UTF-8 before it reaches a log.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace corral::pool {

class StderrLines {
 public:
  static constexpr std::size_t kMaxLine = 4096;
  using Sink = std::function<void(std::string line)>;

  explicit StderrLines(std::uint64_t limit) : limit_(limit) {}

  // Bytes read from the pipe: each line they end goes to `sink`.
  void feed(std::string_view bytes, const Sink& sink);
  // The pipe closed: a last line without its newline goes to `sink`.
  void end(const Sink& sink);

 private:
  void deliver(const Sink& sink);

  std::uint64_t limit_;
  std::uint64_t bytes_ = 0;  // delivered so far, newlines included
  std::string line_;
};

}  // namespace corral::pool
