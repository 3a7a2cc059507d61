// apps/corral/call_slots.hpp: a manifest's `supervisor.slots` held across
// every `corral call` of the same user on this machine.
//
// Each call binds the manifest afresh (its own Supervisor, whose slots count
// only that process's runs). So that `slots: 2` means two calls at once
// however many processes make them, a call first takes one of the
// manifest's slot files with flock(LOCK_EX | LOCK_NB): slot i of the
// manifest at realpath P is `<dir>/<hash of P>.<i>.lock`, where <dir> is
// $XDG_RUNTIME_DIR/corral-slots, or /tmp/corral-slots-<uid>, a directory
// this user owns and no one else may write. The kernel drops the lock when
// the process ends, however it ends. A manifest read from stdin is keyed by
// its content.
#pragma once

#include <optional>
#include <string>

namespace corral::app {

class SharedSlot {
 public:
  SharedSlot(SharedSlot&& other) noexcept : fd_(other.fd_), index_(other.index_) { other.fd_ = -1; }
  SharedSlot& operator=(SharedSlot&&) = delete;
  ~SharedSlot();

  enum class Result { taken, busy, unshared };
  // Takes a free slot of the manifest `key` (a realpath, or "stdin:" and the
  // text) among `slots`. busy: every one is held by another process.
  // unshared: the slot directory is missing or not safely ours (`why`
  // says which); the call then counts its own process only, as before.
  static Result take(const std::string& key, int slots, std::optional<SharedSlot>& slot,
                     std::string& why);

  int index() const { return index_; }

 private:
  SharedSlot(int fd, int index) : fd_(fd), index_(index) {}
  int fd_;
  int index_;
};

}  // namespace corral::app
