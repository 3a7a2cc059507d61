// corral/log.hpp: how a corral component reports to its host's log: one level
// scale and one callback type for the server, MCP and every embedder
// (corral::server::Logger and corral::mcp::Logger are this one).
#pragma once

#include <functional>
#include <string>

namespace corral {

enum class LogLevel { debug, info, warn, error };

// Called from corral's threads; must not throw.
using Logger = std::function<void(LogLevel level, const std::string& message)>;

}  // namespace corral
