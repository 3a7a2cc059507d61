// src/daemon/check.hpp: `corral check`, the whole execution path once.
#pragma once

#include <string>

#include "daemon/settings.hpp"

namespace corral::daemon {

// The result of `corral check`: the whole execution path, end to end.
struct CheckResult {
  bool ok = false;
  std::string value;    // the JSON the guest returned
  std::string failure;  // why not, when !ok
  double seconds = 0;
};

// Runs one execution through a real pool built from `settings`: a spawned,
// hardened worker, a fresh context, a tool answered by a timer on the host
// only after the guest yielded. Requires the value 42. Never throws.
CheckResult run_check(const Settings& settings);

}  // namespace corral::daemon
