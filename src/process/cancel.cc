// src/process/cancel.cc: CancelSource, an eventfd that becomes readable once.
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>

#include "corral/process.hpp"
#include "process/fd.hpp"

namespace corral::process {

struct CancelSource::State {
  UniqueFd fd;
  std::atomic<bool> cancelled{false};
};

CancelSource::CancelSource() : state_(std::make_shared<State>()) {
  state_->fd = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!state_->fd) throw_failure(FailureCode::unavailable, errno_message("eventfd", errno));
}

void CancelSource::cancel() noexcept {
  if (state_->cancelled.exchange(true)) return;
  std::uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(state_->fd.get(), &one, sizeof one);
}

bool CancelSource::cancelled() const noexcept { return state_->cancelled.load(); }

int CancelSource::wait_handle() const noexcept { return state_->fd.get(); }

}  // namespace corral::process
