// src/core/envelope.hpp: the one result envelope, what the executor protocol's
// `execute` answers and what `corral run --json`, `corral exec --json` and
// `corral call` print (docs/commands.md, "The result envelope"):
//   {"ok":true,"execution":{"value":..,"stdout":..,...}}
//   {"ok":false,"failure":{"code":..,"message":..,"retryable":..,"execution":..?}}
#pragma once

#include "core/json.hpp"
#include "corral/outcome.hpp"

namespace corral::core {

json::object envelope(const Execution& execution);
json::object envelope(const Failure& failure);
json::object envelope(const Outcome& outcome);
// The envelope as text, the execution's value spliced in as the JSON text
// it is (what goes on the wire: the value is not parsed on its way out).
std::string envelope_text(const Execution& execution);
std::string envelope_text(const Failure& failure);
std::string envelope_text(const Outcome& outcome);

// Reads an envelope back (the client's side). Throws std::invalid_argument
// when `value` is not one.
Outcome outcome_from_envelope(const json::value& value);

}  // namespace corral::core
