// examples/command.cc: run a command in corral's default confinement (a
// user, pid, mount and network namespace of its own, no capabilities,
// seccomp, a minimal read-only filesystem), linking only corral::process:
// no V8 comes with it.
//
//   build/examples/command_example
#include <cstdio>
#include <string>

#include "corral/process.hpp"

int main() {
  corral::process::Supervisor supervisor;
  corral::process::Command command;
  command.argv = {"/bin/sh", "-c", "echo \"uid $(id -u) in $(pwd) as pid $$\""};
  try {
    corral::Execution execution = supervisor.run(command);
    std::printf("exit %d: %s", execution.exit_code().value_or(-1), execution.stdout_text().c_str());
    return execution.failed() ? 1 : 0;
  } catch (const corral::Error& e) {
    std::fprintf(stderr, "%s: %s\n", std::string(corral::to_string(e.code())).c_str(), e.what());
    return 1;
  }
}
