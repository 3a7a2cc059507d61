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
    buffer_.clear();
    consumed_ = 0;
  }
  return Status::frame;
}

}  // namespace corral::core
