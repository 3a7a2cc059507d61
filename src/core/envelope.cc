#include "core/envelope.hpp"

#include <stdexcept>

namespace corral::core {

json::object envelope(const Execution& execution) {
  return json::object{{"ok", true}, {"execution", execution_to_object(execution)}};
}

json::object envelope(const Failure& failure) {
  return json::object{{"ok", false}, {"failure", failure_to_object(failure)}};
}

json::object envelope(const Outcome& outcome) {
  return outcome.ok() ? envelope(outcome.execution()) : envelope(outcome.failure());
}

std::string envelope_text(const Execution& execution) {
  std::string out = R"({"ok":true,"execution":)";
  append_execution_json(out, execution);
  out += '}';
  return out;
}

std::string envelope_text(const Failure& failure) { return json::serialize(envelope(failure)); }

std::string envelope_text(const Outcome& outcome) {
  return outcome.ok() ? envelope_text(outcome.execution()) : envelope_text(outcome.failure());
}

Outcome outcome_from_envelope(const json::value& value) {
  const json::object* object = value.if_object();
  const json::value* ok = object ? object->if_contains("ok") : nullptr;
  if (!ok || !ok->is_bool()) throw std::invalid_argument("the result is not an envelope");
  if (ok->get_bool()) {
    const json::value* execution = object->if_contains("execution");
    if (!execution || !execution->is_object()) {
      throw std::invalid_argument("the envelope carries no execution");
    }
    return execution_from_object(execution->get_object());
  }
  const json::value* failure = object->if_contains("failure");
  if (!failure || !failure->is_object()) {
    throw std::invalid_argument("the envelope carries no failure");
  }
  return failure_from_object(failure->get_object());
}

}  // namespace corral::core
