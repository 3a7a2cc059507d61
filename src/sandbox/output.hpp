// src/sandbox/output.hpp: one capped output channel of a run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/utf8.hpp"

namespace corral::sandbox {

// CappedOutput keeps at most `limit` bytes. A write that crosses the cap is
// cut at the last whole UTF-8 character before it, later writes are dropped,
// and truncated() turns true. Not thread-safe: one run's thread owns it.
class CappedOutput {
 public:
  explicit CappedOutput(std::optional<std::uint64_t> limit) : limit_(limit) {}

  void write(std::string_view bytes);

  const std::string& text() const noexcept { return text_; }
  std::string take() noexcept { return std::move(text_); }
  bool truncated() const noexcept { return truncated_; }
  // Every byte offered, kept or dropped.
  std::uint64_t offered() const noexcept { return offered_; }
  // Keeps `bytes` as far as they fit and drops every later write: for a
  // writer that already left out part of what it meant to write.
  void write_cut(std::string_view bytes) {
    write(bytes);
    truncated_ = true;
  }
  // Bytes a write may still keep; nullopt when the channel has no cap.
  std::optional<std::uint64_t> room() const noexcept {
    if (!limit_) return std::nullopt;
    return truncated_ ? 0 : *limit_ - text_.size();
  }

 private:
  std::optional<std::uint64_t> limit_;
  std::string text_;
  bool truncated_ = false;
  std::uint64_t offered_ = 0;
};

inline void CappedOutput::write(std::string_view bytes) {
  offered_ += bytes.size();
  if (truncated_) return;
  if (!limit_ || text_.size() + bytes.size() <= *limit_) {
    text_.append(bytes);
    return;
  }
  std::size_t room = static_cast<std::size_t>(*limit_ - text_.size());
  // Back off to a character boundary: never keep half a UTF-8 sequence.
  text_.append(bytes.substr(0, core::utf8_cut(bytes, room)));
  truncated_ = true;
}

}  // namespace corral::sandbox
