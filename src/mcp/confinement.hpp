// src/mcp/confinement.hpp: a `"confinement"` value of a JSON setting (an
// upstream MCP server's entry) -> process::Confinement, with the manifests'
// field names and meanings (docs/commands.md): "confined", "host", or an
// object of user, uid, gid, seccomp, pid_namespace, filesystem, binds,
// network, limits, strict.
#pragma once

#include <string>

#include "core/json.hpp"
#include "corral/process.hpp"

namespace corral::mcp {

// Reads `value` over the confined default (process::Confinement{}). The
// manifest reader (bind::read_confinement_json) does the reading, so both
// accept exactly the same text; binds must be absolute here (a setting has no
// folder to resolve a relative one against). Throws std::invalid_argument
// that starts with `where` ("upstream \"p\": confinement") and names the
// field.
process::Confinement confinement_from_json(const core::json::value& value,
                                           const std::string& where);

}  // namespace corral::mcp
