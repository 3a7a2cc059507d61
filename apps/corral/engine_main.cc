// corral-engine (libexec/corral/): the corral commands that run guests in
// their own process and so link V8 and mruby: run and the pool's worker.
// bin/corral execs it with its own argv for run (front_main.cc), and a
// daemon's pool starts it as `corral-engine worker`; people run `corral`,
// not this.
#include <sys/prctl.h>

#include "engine.hpp"

int main(int argc, char** argv) {
  using namespace corral::app;
  // People ran `corral run`, and ps, top, pgrep and pkill (and the
  // supervisors that use them) should keep seeing "corral", not the name of
  // the file the front exec'd. Threads and workers inherit it.
  ::prctl(PR_SET_NAME, "corral", 0, 0, 0);
  return run_cli(argc, argv, [](CLI::App& app, Action& action) {
    add_run_command(app, action);
    add_worker_command(app, action);
  });
}
