// bin/corral: the front. It runs the commands that need no guest engine
// itself (tools, call, exec, status, maintenance) and execs corral-engine
// for those that do (run, serve, check, mcp, worker), with the same argv:
// the engine's pid, signals and exit status are the command's. So `corral
// call` and `corral exec` never load libnode (~25 ms a process, measured in
// BENCHMARKS.md).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "commands.hpp"
#include "core/companion.hpp"

// The build tree and the install prefix (apps/corral/CMakeLists.txt).
#ifndef CORRAL_ENGINE_BUILD_DIR
#define CORRAL_ENGINE_BUILD_DIR ""
#endif
#ifndef CORRAL_ENGINE_BUILD_PATH
#define CORRAL_ENGINE_BUILD_PATH ""
#endif
#ifndef CORRAL_ENGINE_INSTALL_PATH
#define CORRAL_ENGINE_INSTALL_PATH ""
#endif

namespace corral::app {
namespace {

// Replaces this process with corral-engine; returns only when it cannot.
int exec_engine(char** argv) {
  std::string error;
  const std::string engine =
      core::find_companion({"corral-engine", nullptr, CORRAL_ENGINE_BUILD_DIR,
                            CORRAL_ENGINE_BUILD_PATH, CORRAL_ENGINE_INSTALL_PATH},
                           error);
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

}  // namespace
}  // namespace corral::app

int main(int argc, char** argv) {
  using namespace corral::app;
  if (argc > 1 && find_engine_command(argv[1])) return exec_engine(argv);
  return run_cli(argc, argv, [](CLI::App& app, Action& action) {
    add_engine_command(app, "run");
    add_command_commands(app, action);
    add_exec_command(app, action);
    add_engine_command(app, "worker");
    add_engine_command(app, "serve");
    add_engine_command(app, "check");
    add_admin_commands(app, action);
    add_engine_command(app, "mcp");
  });
}
