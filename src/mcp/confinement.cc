// src/mcp/confinement.cc: see confinement.hpp.
#include "mcp/confinement.hpp"

#include <stdexcept>

#include "bind/confinement_reader.hpp"

namespace corral::mcp {

process::Confinement confinement_from_json(const core::json::value& value,
                                           const std::string& where) {
  process::Confinement out = bind::read_confinement_json(value, where);
  for (std::size_t i = 0; i < out.binds.size(); ++i) {
    if (out.binds[i].source.empty() || out.binds[i].source[0] != '/')
      throw std::invalid_argument(where + ".binds[" + std::to_string(i) +
                                  "]: the source must be an absolute path (got \"" +
                                  out.binds[i].source + "\")");
  }
  return out;
}

}  // namespace corral::mcp
