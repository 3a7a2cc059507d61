// src/process/faults.hpp: fault injection into a Supervisor, for corral's own
// tests. The public SupervisorOptions holds only a pointer to this type,
// which embedders cannot build (it is declared there, defined here), so no
// production configuration can switch a fault on.
#pragma once

#include <functional>

#include "corral/process.hpp"

namespace corral::process {

struct SupervisorFaults {
  // While this returns true, the supervisor does not signal units (neither
  // SIGTERM nor SIGKILL nor cgroup.kill), which simulates a unit that cannot
  // be emptied. Called from run threads and the background re-check.
  std::function<bool()> suppress_kill;
};

}  // namespace corral::process
