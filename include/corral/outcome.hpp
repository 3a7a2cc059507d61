// corral/outcome.hpp: how a run ended, as a value.
//
// Pool, server and client pass an Outcome; the public in-process API (and
// `value_or_throw`) throws the failure instead, as the exception family of
// its code (corral/failure.hpp).
//
// Example:
//   corral::Outcome outcome = pool.execute(std::move(request));
//   if (outcome.ok()) use(outcome.execution().value());
//   else log(corral::to_string(outcome.failure().code), outcome.failure().message);
//   // or, at the edge of a program that prefers exceptions:
//   const corral::Execution& e = outcome.value_or_throw();
#pragma once

#include <utility>
#include <variant>

#include "corral/execution.hpp"
#include "corral/failure.hpp"

namespace corral {

// Outcome: exactly one of an Execution (the run succeeded) and a Failure;
// there is no empty or double state to check for.
class Outcome {
 public:
  Outcome(Execution execution) : state_(std::in_place_index<0>, std::move(execution)) {}
  Outcome(Failure failure) : state_(std::in_place_index<1>, std::move(failure)) {}

  bool ok() const noexcept { return state_.index() == 0; }
  // ok() only (std::bad_variant_access otherwise).
  const Execution& execution() const& { return std::get<0>(state_); }
  Execution&& execution() && { return std::get<0>(std::move(state_)); }
  // !ok() only (std::bad_variant_access otherwise).
  const Failure& failure() const& { return std::get<1>(state_); }
  Failure&& failure() && { return std::get<1>(std::move(state_)); }

  // The execution, or the failure thrown as the exception of its code.
  const Execution& value_or_throw() const& {
    if (!ok()) throw_failure(failure());
    return execution();
  }

 private:
  std::variant<Execution, Failure> state_;
};

}  // namespace corral
