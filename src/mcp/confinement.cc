// src/mcp/confinement.cc: see confinement.hpp.
#include "mcp/confinement.hpp"

#include <stdexcept>

#include "corral/bind.hpp"

namespace corral::mcp {

process::Confinement confinement_from_json(const core::json::value& value,
                                           const std::string& where) {
  if (!value.is_string() && !value.is_object())
    throw std::invalid_argument(where + ": must be \"confined\", \"host\" or an object");
  // A one-command manifest whose only setting is this confinement: the tree's
  // profile is then the value read over the confined default.
  const core::json::object manifest{{"executable", "upstream"}, {"confinement", value}};
  process::Confinement out;
  try {
    out = bind::load_manifest(core::json::serialize(manifest)).hardening.confinement;
  } catch (const std::invalid_argument& e) {
    // "manifest: manifest.confinement.binds[0]: ..." names this value's
    // field after the manifest's prefix.
    const std::string text = e.what();
    const std::string prefix = "manifest.confinement";
    const auto at = text.find(prefix);
    throw std::invalid_argument(at == std::string::npos ? where + ": " + text
                                                        : where + text.substr(at + prefix.size()));
  }
  for (std::size_t i = 0; i < out.binds.size(); ++i) {
    if (out.binds[i].source.empty() || out.binds[i].source[0] != '/')
      throw std::invalid_argument(where + ".binds[" + std::to_string(i) +
                                  "]: the source must be an absolute path (got \"" +
                                  out.binds[i].source + "\")");
  }
  return out;
}

}  // namespace corral::mcp
