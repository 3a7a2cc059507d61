// src/process/capture.hpp: retained output of one run, bounded across both
// streams; what does not fit is read and dropped so the child never blocks.
// finish() applies core/utf8.hpp's policy: the text is valid UTF-8, bytes that
// were not are U+FFFD (and the stream is marked replaced), and the budget
// cuts only between characters.
#pragma once

#include <cstdint>
#include <string>

#include "process/fd.hpp"

namespace corral::process {

enum class Stream { out, err };

// OutputCapture: not thread-safe; owned by the run's event loop.
class OutputCapture {
 public:
  explicit OutputCapture(std::uint64_t budget) : budget_(budget) {}

  enum class ReadResult { again, eof };
  // Reads what `fd` (non-blocking) has now, up to a fairness cap. Returns eof
  // once the write side is closed and drained.
  ReadResult read_from(int fd, Stream stream);

  // Once both streams ended: replaces what is not UTF-8 (setting
  // *_replaced) and, if that grew the text past the budget, cuts it again
  // between characters (stderr first, then stdout).
  void finish();

  std::string stdout_text;
  std::string stderr_text;
  bool stdout_truncated = false;
  bool stderr_truncated = false;
  bool stdout_replaced = false;
  bool stderr_replaced = false;
  // Every byte read, kept or not.
  std::uint64_t total_bytes = 0;

 private:
  std::uint64_t retained() const { return stdout_text.size() + stderr_text.size(); }
  // Splices past-budget bytes into /dev/null (opened on first use).
  ReadResult discard(int fd, Stream stream);

  std::uint64_t budget_;
  UniqueFd null_;
};

}  // namespace corral::process
