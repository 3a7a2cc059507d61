// apps/corral/engine.hpp: the subcommands of corral-engine, the program that
// links V8 and mruby: run and worker (kEngineCommands), the two that run
// guests in their own process. bin/corral execs it for them (front_main.cc).
#pragma once

#include "cli.hpp"

namespace corral::app {

// `corral run FILE|-`: run a script in the sandbox.
void add_run_command(CLI::App& app, Action& action);

// `corral worker`: the hardened process a worker pool spawns (hidden).
void add_worker_command(CLI::App& app, Action& action);

}  // namespace corral::app
