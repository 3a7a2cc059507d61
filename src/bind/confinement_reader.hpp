// src/bind/confinement_reader.hpp: the manifests' `confinement:` value read
// from JSON on its own, for settings outside a manifest that take the same
// field names and meanings (an upstream MCP server's "confinement").
#pragma once

#include <string>

#include "core/json.hpp"
#include "corral/process.hpp"

namespace corral::bind {

// `value` ("confined", "host" or an object of user, uid, gid, seccomp,
// pid_namespace, filesystem, binds, network, limits, strict) read over the
// confined default, exactly as a manifest reads it. Bind sources are left as
// given (a manifest resolves relative ones against its folder; a caller
// without a folder refuses them). Throws std::invalid_argument that starts
// with `where` and names the field.
process::Confinement read_confinement_json(const core::json::value& value,
                                           const std::string& where);

}  // namespace corral::bind
