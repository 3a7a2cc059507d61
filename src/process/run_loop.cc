// src/process/run_loop.cc: poll(2) over the pipes, the leader's pidfd, the
// unit's event file and the cancel/shutdown eventfds.
#include "process/run_loop.hpp"

#include <fcntl.h>
#include <poll.h>

#include <algorithm>
#include <array>
#include <cerrno>

namespace corral::process {

namespace {

// Polled while waiting for a unit to empty when it offers no event of its
// own (process groups, and as a safety net for the others).
constexpr auto kEmptyPollInterval = std::chrono::milliseconds(5);

int millis_until(Clock::time_point until) {
  auto left = until - Clock::now();
  if (left <= Clock::duration::zero()) return 0;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return static_cast<int>(std::min<long long>(ms, 1 << 30));
}

class Loop {
 public:
  Loop(RunLoopInput& input, OutputCapture& capture) : in_(input), capture_(capture) {}

  RunLoopResult run() {
    RunLoopResult result;
    result.ending = wait_running();
    auto stop_started = Clock::now();
    if (result.ending == Ending::exited) {
      // The command is done; whatever it left behind goes at once.
      result.unit_empty = in_.unit->empty();
      if (!result.unit_empty) {
        if (in_.on_cleanup) in_.on_cleanup();
        force();
        result.unit_empty = wait_empty(stop_started + in_.cleanup_budget);
      }
    } else {
      if (in_.on_cleanup) in_.on_cleanup();
      if (!suppressed()) in_.unit->terminate();
      result.unit_empty = wait_empty(stop_started + in_.cleanup_budget / 2);
      if (!result.unit_empty) {
        force();
        result.unit_empty = wait_empty(stop_started + in_.cleanup_budget);
      }
    }
    if (result.unit_empty) drain_rest();
    return result;
  }

 private:
  bool suppressed() const { return in_.suppress_kill && in_.suppress_kill(); }
  void force() {
    if (!suppressed()) in_.unit->kill_all();
  }

  // Builds the poll set; `extra` are the fds beyond the pipes.
  size_t fill(std::array<pollfd, 6>& fds, bool with_controls, bool with_unit_event) {
    size_t n = 0;
    auto add = [&](int fd, short events) {
      if (fd >= 0) fds[n++] = pollfd{fd, events, 0};
    };
    add(in_.stdout_read.get(), POLLIN);
    add(in_.stderr_read.get(), POLLIN);
    add(in_.unit->leader_fd(), POLLIN);
    if (with_controls) {
      add(in_.cancel_fd, POLLIN);
      add(in_.shutdown_fd, POLLIN);
    }
    if (with_unit_event) add(in_.unit->event_fd(), POLLPRI);
    return n;
  }

  // Services whatever poll reported: pipes and the leader.
  void service(const std::array<pollfd, 6>& fds, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == in_.stdout_read.get()) {
        read_pipe(in_.stdout_read, Stream::out);
      } else if (fds[i].fd == in_.stderr_read.get()) {
        read_pipe(in_.stderr_read, Stream::err);
      } else if (fds[i].fd == in_.unit->leader_fd()) {
        in_.unit->reap_leader();
      }
    }
  }

  void read_pipe(UniqueFd& fd, Stream stream) {
    if (capture_.read_from(fd.get(), stream) == OutputCapture::ReadResult::eof) fd.reset();
  }

  bool readable(const std::array<pollfd, 6>& fds, size_t n, int fd) const {
    for (size_t i = 0; i < n; ++i) {
      if (fds[i].fd == fd && fd >= 0 && (fds[i].revents & POLLIN) != 0) return true;
    }
    return false;
  }

  // Until the leader exits (exited), the deadline passes (timeout), or a
  // cancel or shutdown arrives (cancelled).
  Ending wait_running() {
    std::array<pollfd, 6> fds{};
    for (;;) {
      if (in_.unit->leader_reaped()) return Ending::exited;
      size_t n = fill(fds, true, false);
      int rc = ::poll(fds.data(), n, millis_until(in_.deadline));
      if (rc < 0 && errno != EINTR) return Ending::cancelled;  // cannot watch it: stop it
      if (rc > 0) {
        service(fds, n);
        if (in_.unit->leader_reaped()) return Ending::exited;
        if (readable(fds, n, in_.cancel_fd) || readable(fds, n, in_.shutdown_fd)) {
          return Ending::cancelled;
        }
      }
      if (Clock::now() >= in_.deadline) return Ending::timeout;
    }
  }

  // Until the unit is empty (true) or `until` passes (false); keeps draining.
  bool wait_empty(Clock::time_point until) {
    std::array<pollfd, 6> fds{};
    for (;;) {
      if (in_.unit->empty()) return true;
      if (Clock::now() >= until) return false;
      size_t n = fill(fds, false, true);
      int timeout = std::min(millis_until(until), static_cast<int>(kEmptyPollInterval.count()));
      int rc = ::poll(fds.data(), n, timeout);
      if (rc > 0) service(fds, n);
    }
  }

  // Once the unit is empty no writer is left (unless one escaped it): take
  // what the pipes still hold without waiting for more.
  void drain_rest() {
    for (UniqueFd* fd : {&in_.stdout_read, &in_.stderr_read}) {
      Stream stream = fd == &in_.stdout_read ? Stream::out : Stream::err;
      while (*fd) {
        auto result = capture_.read_from(fd->get(), stream);
        if (result == OutputCapture::ReadResult::eof) {
          fd->reset();
        } else {
          break;
        }
      }
    }
  }

  RunLoopInput& in_;
  OutputCapture& capture_;
};

}  // namespace

RunLoopResult drive_run(RunLoopInput& input, OutputCapture& capture) {
  return Loop(input, capture).run();
}

}  // namespace corral::process
