// src/core/envelope.hpp: the one result envelope `corral run --json`,
// `corral exec --json` and `corral call` print (docs/commands.md, "The result
// envelope"):
//   {"ok":true,"execution":{"value":..,"stdout":..,...}}
//   {"ok":false,"failure":{"code":..,"message":..,"retryable":..,"execution":..?}}
// Header-only so every app links it without a build change.
#pragma once

#include "core/json.hpp"

namespace corral::core {

inline json::object result_envelope(const Execution& execution) {
  return json::object{{"ok", true}, {"execution", execution_to_object(execution)}};
}

inline json::object result_envelope(const Failure& failure) {
  return json::object{{"ok", false}, {"failure", failure_to_object(failure)}};
}

}  // namespace corral::core
