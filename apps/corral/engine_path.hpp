// apps/corral/engine_path.hpp: where bin/corral finds corral-engine, the
// program it execs for run and starts as every pool worker.
#pragma once

#include <string>

namespace corral::app {

// The engine's path as core/companion.hpp finds it (beside this program, in
// ../libexec/corral/, in the build tree, at the install path), or "" with
// `error` saying where it looked.
std::string find_engine(std::string& error);

}  // namespace corral::app
