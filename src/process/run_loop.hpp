// src/process/run_loop.hpp: one run's event loop, driven on the caller's
// thread: drain both pipes, notice the leader's exit, the deadline, a
// cancellation or shutdown, then clean the unit up within its budget.
#pragma once

#include <chrono>
#include <functional>

#include "corral/process.hpp"
#include "process/capture.hpp"
#include "process/unit.hpp"

namespace corral::process {

enum class Ending { exited, timeout, cancelled };

struct RunLoopInput {
  Unit* unit = nullptr;
  UniqueFd stdout_read;  // non-blocking read ends
  UniqueFd stderr_read;
  Clock::time_point deadline;
  std::chrono::nanoseconds cleanup_budget{};
  int cancel_fd = -1;    // readable when the caller cancelled; -1 if none
  int shutdown_fd = -1;  // readable once the supervisor shuts down
  // True while signals must not be sent (SupervisorFaults::suppress_kill).
  std::function<bool()> suppress_kill;
  // Told when the run starts cleaning up (for Status).
  std::function<void()> on_cleanup;
};

struct RunLoopResult {
  Ending ending = Ending::exited;
  bool unit_empty = false;  // false: cleanup_failed
};

// Runs until the leader exited and the unit is empty, or the unit could not
// be emptied within the cleanup budget. Fills `capture`.
RunLoopResult drive_run(RunLoopInput& input, OutputCapture& capture);

}  // namespace corral::process
