// src/core/json.hpp: JSON helpers shared by every layer (Boost.JSON inside
// src/ only; the public API speaks JSON text).
#pragma once

#include <boost/json.hpp>
#include <memory>
#include <string>
#include <string_view>

#include "corral/execution.hpp"
#include "corral/failure.hpp"

namespace corral::core {

namespace json = boost::json;

// Parses `text`; throws std::invalid_argument naming `what` on bad JSON.
json::value parse_json(std::string_view text, std::string_view what);

// True iff `text` is one complete JSON document that is an array.
bool is_json_array(std::string_view text) noexcept;

json::object execution_to_object(const Execution& execution);
Execution execution_from_object(const json::object& object);

// {"code":..,"message":..,"retryable":..,"execution":..?}
json::object failure_to_object(const Failure& failure);
// Throws std::invalid_argument when `object` is not a failure envelope.
Failure failure_from_object(const json::object& object);

}  // namespace corral::core
