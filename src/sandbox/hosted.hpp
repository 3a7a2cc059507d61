// src/sandbox/hosted.hpp: what a process that exists to run guests (a
// pooled worker) needs of a Sandbox beyond the public API: how its engines
// run there, and a cancel that also reaches the run about to start. Nothing
// here is process-global: each Sandbox is made with its own Hosting.
#pragma once

#include <functional>
#include <memory>

#include "corral/failure.hpp"
#include "corral/sandbox.hpp"

namespace corral::sandbox {

// StuckRun: what an inline Ruby run calls, from another thread, when its
// deadline passes or it is cancelled while the guest is still running Ruby
// (mruby cannot be interrupted). `failure` is the run's timeout or
// cancelled failure with the output and usage so far. The handler must end
// the run itself; a pooled worker reports it and exits. Without a handler
// the run goes on until the guest returns.
using StuckRun = std::function<void(const Failure& failure)>;

// Hosting: the process a Sandbox's engine runs in.
struct Hosting {
  // False in a process that cannot start processes (a locked-down worker):
  // Ruby guests then run on the run's thread instead of a helper process,
  // and only a timeout during a tool wait can be enforced from inside; the
  // process itself must be the bound (the pool kills a worker that misses
  // its deadline). JavaScript runs the same either way.
  bool may_spawn = true;
  StuckRun on_stuck;  // inline Ruby runs only
};

// The Sandbox's hosted side. A struct of statics so the public header names
// one friend.
struct Hosted {
  // A Sandbox whose engine runs as `hosting` says. Throws as Sandbox's
  // constructor does.
  static std::unique_ptr<Sandbox> make(Options options, Hosting hosting);

  // Like Sandbox::cancel(), and when no run has reached the point where a
  // cancel can stop it (one is being started on another thread, or none
  // is), the next run is cancelled as it starts (a run forgets, as it ends,
  // one that came while it ran). For a caller that cannot know whether the
  // run it means has got that far (the worker hands a run to a thread and
  // its cancel arrives on another); it calls clear_pending_cancel() once
  // that run has returned, so that a cancel that came just after does not
  // stop the run after it.
  static void cancel_including_next(Sandbox& sandbox);
  static void clear_pending_cancel(Sandbox& sandbox);
};

}  // namespace corral::sandbox
