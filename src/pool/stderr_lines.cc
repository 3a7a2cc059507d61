// src/pool/stderr_lines.cc: cutting, budgeting and cleaning a worker's stderr.
#include "pool/stderr_lines.hpp"

#include <utility>

#include "core/utf8.hpp"

namespace corral::pool {

void StderrLines::feed(std::string_view bytes, const Sink& sink) {
  for (const char c : bytes) {
    if (c == '\n') {
      deliver(sink);
    } else if (line_.size() < kMaxLine) {
      line_.push_back(c);
    } else if (line_.size() == kMaxLine) {
      // Cut between characters (core/utf8.hpp), then mark the cut; the
      // mark takes the line past kMaxLine, so the rest of it is dropped.
      line_.resize(core::utf8_complete(line_));
      line_ += " [cut]";
    }
  }
}

void StderrLines::end(const Sink& sink) {
  if (!line_.empty()) deliver(sink);
}

void StderrLines::deliver(const Sink& sink) {
  std::string line = std::exchange(line_, std::string());
  if (bytes_ > limit_) return;
  bytes_ += line.size() + 1;
  if (bytes_ > limit_) {
    line =
        "further stderr dropped (past worker_stderr_limit, " + std::to_string(limit_) + " bytes)";
  }
  core::replace_invalid_utf8(line);
  sink(std::move(line));
}

}  // namespace corral::pool
