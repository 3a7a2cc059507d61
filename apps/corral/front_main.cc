// bin/corral: the front. It runs the commands that need no guest engine in
// its own process itself (tools, call, exec, status, maintenance, and serve,
// check and mcp, whose guests run in corral-engine workers) and execs
// corral-engine for those that do (run, worker), with the same argv: the
// engine's pid, signals and exit status are the command's. So `corral call`
// never loads libnode (~25 ms a process, measured in BENCHMARKS.md), and the
// daemon, the process that faces the network, maps no V8, ICU or OpenSSL.
#include <malloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "commands.hpp"
#include "engine_path.hpp"

namespace corral::app {
namespace {

// Replaces this process with corral-engine; returns only when it cannot.
int exec_engine(char** argv) {
  std::string error;
  const std::string engine = find_engine(error);
  if (engine.empty()) {
    std::fprintf(stderr, "corral: unavailable: %s\n", error.c_str());
    return kExitFailure;
  }
  ::execv(engine.c_str(), argv);
  std::fprintf(stderr, "corral: unavailable: cannot run %s: %s\n", engine.c_str(),
               std::strerror(errno));
  return kExitFailure;
}

// An engine command as the front's --help lists it; the engine parses it.
void add_engine_command(CLI::App& app, std::string_view name) {
  const EngineCommand* command = find_engine_command(name);
  if (!command) return;
  CLI::App* sub = app.add_subcommand(command->name, command->description);
  sub->allow_extras();
  if (command->hidden) sub->group("");
}

// A daemon command listed by its description only (commands.hpp says why).
void list_daemon_command(CLI::App& app, std::string_view name) {
  app.add_subcommand(find_daemon_command(name)->name, find_daemon_command(name)->description)
      ->allow_extras();
}

// A daemon (serve, mcp; check shares their start) outlives its big answers:
// glibc's default raises its mmap threshold to the largest block freed (up
// to 32 MiB) and then keeps up to twice that free at the top of each I/O
// thread's arena, so after one client's 10 MiB answers the daemon held
// ~50 MiB it no longer used, for good (BENCHMARKS.md, "Memory a daemon gives
// back"). A fixed threshold keeps blocks past 1 MiB mapped for their own
// lifetime: freed, they are unmapped. (It also sets aside an operator's
// GLIBC_TUNABLES mmap_threshold, which this measured default replaces.)
void give_large_blocks_back() { ::mallopt(M_MMAP_THRESHOLD, 1 << 20); }

}  // namespace
}  // namespace corral::app

int main(int argc, char** argv) {
  using namespace corral::app;
  if (argc > 1 && find_engine_command(argv[1])) return exec_engine(argv);
  const bool daemon = argc > 1 && find_daemon_command(argv[1]);
  if (daemon) give_large_blocks_back();
  return run_cli(argc, argv, [daemon](CLI::App& app, Action& action) {
    add_engine_command(app, "run");
    add_command_commands(app, action);
    add_exec_command(app, action);
    add_engine_command(app, "worker");
    if (daemon) {
      add_serve_commands(app, action);
    } else {
      list_daemon_command(app, "serve");
      list_daemon_command(app, "check");
    }
    add_admin_commands(app, action);
    if (daemon) {
      add_mcp_command(app, action);
    } else {
      list_daemon_command(app, "mcp");
    }
  });
}
