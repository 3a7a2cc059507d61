#include "core/frame.hpp"

namespace corral::core {

void FrameReader::compact() {
  if (consumed_ == 0) return;
  buffer_.erase(0, consumed_);
  consumed_ = 0;
}

FrameReader::Status FrameReader::next(std::string& body) {
  const std::size_t available = buffer_.size() - consumed_;
  if (available < kFrameHeaderBytes) {
    compact();
    return Status::need_more;
  }
  const std::size_t size = frame_length(buffer_.data() + consumed_);
  if (size > max_frame_) return Status::oversized;
  if (available < kFrameHeaderBytes + size) {
    compact();
    return Status::need_more;
  }
  body.assign(buffer_, consumed_ + kFrameHeaderBytes, size);
  consumed_ += kFrameHeaderBytes + size;
  if (consumed_ == buffer_.size()) {
    // Drained: a buffer one big frame grew is given back, not kept for the
    // channel's lifetime (a worker that once answered 10 MiB held 16 MiB
    // of capacity until it retired, for every worker of the pool).
    if (buffer_.capacity() > kKeptFrameBytes) {
      std::string().swap(buffer_);
    } else {
      buffer_.clear();
    }
    consumed_ = 0;
  }
  return Status::frame;
}

}  // namespace corral::core
