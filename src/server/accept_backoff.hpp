// src/server/accept_backoff.hpp: what an accept loop does when the process
// (or the system) runs out of file descriptors or socket memory.
//
// accept() failing with EMFILE, ENFILE, ENOBUFS or ENOMEM leaves the
// connection in the backlog, so re-arming at once fails again at once: the
// loop spins and logs without end. AcceptBackoff instead
//   - holds one spare descriptor (/dev/null). On EMFILE/ENFILE it closes it,
//     accepts one pending connection on the freed slot, answers it with a
//     fixed `503` (JSON body, Retry-After: 1) and closes it, then reopens the
//     spare: a client is told instead of left hanging, and the backlog drains
//     at the rate connections arrive (never faster: the loop only goes on
//     while the listener is readable);
//   - with the spare held and nothing pending, waits for the listener to
//     become readable (not for a timer: the next caller is told at once
//     instead of up to a second later, and a descriptor freed meanwhile lets
//     it be accepted);
//   - otherwise (no spare: ENOBUFS, ENOMEM, or the spare could not be
//     reopened) waits 10 ms, doubling to 1 s, before the next accept, and
//     tries to take a spare back each time (another thread may have taken
//     the slot it freed, and released it since);
//   - the first accept that succeeds ends the episode and resets the delay;
//   - logs one line when an episode starts and one when it ends (with the
//     count of failed accepts and of connections refused), at most one
//     episode's lines per 10 s; episodes in between are counted in the next.
//
// Not thread-safe: use it from the accept loop's strand only.
#pragma once

#include <boost/system/error_code.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace corral::server {

class AcceptBackoff {
 public:
  // `listener` names the loop in log lines ("executor", "admin").
  AcceptBackoff(std::string listener, std::function<void(const std::string&)> warn);
  ~AcceptBackoff();
  AcceptBackoff(const AcceptBackoff&) = delete;
  AcceptBackoff& operator=(const AcceptBackoff&) = delete;

  // True for the errors that mean "out of descriptors or memory".
  static bool exhausted(const boost::system::error_code& ec);
  // Whether a connection waits in `listen_fd`'s backlog (a poll, no wait).
  static bool pending(int listen_fd);

  // What the accept loop does next after an exhausted() error.
  struct Retry {
    enum class Kind {
      now,            // a pending connection was just refused: accept again
      when_readable,  // nothing pending: wait until the listener is readable
      after_delay,    // no spare descriptor: wait `delay`
    };
    Kind kind = Kind::now;
    std::chrono::milliseconds delay{0};
  };

  // After an accept on `listen_fd` failed with an exhausted() error.
  Retry failed(int listen_fd, const boost::system::error_code& ec);
  // After an accept succeeded: ends an episode (and logs its summary).
  void succeeded();

  // Connections refused through the spare descriptor, over the lifetime.
  std::uint64_t refused_total() const noexcept { return refused_total_; }

  // The fixed answer sent to a connection refused for exhaustion.
  static const std::string& refusal();

 private:
  enum class Refusal { refused, nothing_pending, impossible };

  void reopen_spare();
  Refusal refuse_one(int listen_fd);

  std::string listener_;
  std::function<void(const std::string&)> warn_;
  int spare_ = -1;
  bool in_episode_ = false;
  bool episode_logged_ = false;
  std::chrono::milliseconds delay_{0};
  std::chrono::steady_clock::time_point episode_start_{};
  std::chrono::steady_clock::time_point last_log_{};
  bool ever_logged_ = false;
  std::uint64_t failures_ = 0;
  std::uint64_t refused_ = 0;
  std::uint64_t silent_episodes_ = 0;
  std::uint64_t refused_total_ = 0;
};

}  // namespace corral::server
