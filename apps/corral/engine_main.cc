// corral-engine (libexec/corral/): the corral commands that run guests and
// so link V8 and mruby: run, serve, check, mcp and the pool's worker.
// bin/corral execs it with its own argv (front_main.cc); people run
// `corral`, not this.
#include <sys/prctl.h>

#include "engine.hpp"

int main(int argc, char** argv) {
  using namespace corral::app;
  // People ran `corral serve`, and ps, top, pgrep and pkill (and the
  // supervisors that use them) should keep seeing "corral", not the name of
  // the file the front exec'd. Threads and workers inherit it.
  ::prctl(PR_SET_NAME, "corral", 0, 0, 0);
  return run_cli(argc, argv, [](CLI::App& app, Action& action) {
    add_run_command(app, action);
    add_worker_command(app, action);
    add_serve_commands(app, action);
    add_mcp_command(app, action);
  });
}
