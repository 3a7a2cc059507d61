// Placeholder until the command binding lands (issue 3).
#include "subcommands.hpp"

namespace corral::app {

void add_command_commands(CLI::App&, Action&) {}

}  // namespace corral::app
