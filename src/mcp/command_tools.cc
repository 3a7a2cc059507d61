// Bound commands as MCP tools: a direct tool call or the compact mode's
// call_tool runs the command on a Tasks thread under its binding's
// supervisor; every call of a binding is counted by outcome.
#include <fmt/format.h>

#include "mcp/results.hpp"
#include "mcp/service.hpp"

namespace corral::mcp {

void Service::Impl::call_tool(const json::object& arguments, std::shared_ptr<CallContext> context,
                              ResultDone done) {
  const json::value* name = arguments.if_contains("name");
  const json::value* input = arguments.if_contains("input");
  std::string problem;
  if (!name || !name->is_string())
    problem = "call_tool: `name` must be a string";
  else if (input && !input->is_object())
    problem = "call_tool: `input` must be an object";
  for (const auto& [key, v] : arguments)
    if (key != "name" && key != "input")
      problem = "call_tool: unknown argument " + std::string(key);
  if (!problem.empty()) return done(refusal(std::move(problem)));
  const std::string target(name->get_string());
  if (!commands_.count(target)) return done(no_such_command(target));
  run_command(target, input ? input->get_object() : json::object{}, std::move(context),
              std::move(done));
}

void Service::Impl::run_command(const std::string& name, const json::object& input,
                                std::shared_ptr<CallContext> context, ResultDone done) {
  const auto found = commands_.find(name);
  bind::Binding* binding = found->second.first;
  process::CancelSource cancel;
  const std::uint64_t cancel_id = context->on_cancel([cancel]() mutable { cancel.cancel(); });
  context->progress("running " + name);
  tasks_.spawn([this, binding, name, input = json::serialize(input), cancel, context, cancel_id,
                done] {
    process::RunOptions run;
    run.cancel = cancel;
    std::optional<Execution> execution;
    std::optional<Failure> failure;
    try {
      execution = binding->call(name, input, run);
    } catch (const Error& e) {
      failure = e.to_failure();
      if (failure->code == FailureCode::busy) failure->message += held_slots(*binding);
    } catch (const std::exception& e) {
      failure = Failure{FailureCode::internal, e.what(), nullptr};
    }
    count(binding, failure ? std::optional<FailureCode>(failure->code) : std::nullopt);
    deliver(
        done,
        [&] {
          context->forget(cancel_id);
          context->log(failure ? LogLevel::warn : LogLevel::info,
                       name + (failure ? ": " + std::string(to_string(failure->code)) : ": ok"));
          return command_result(execution, failure, options_.result_budget,
                                [&context](std::vector<ResultStore::Text> parts) {
                                  return context->keep(std::move(parts));
                                });
        },
        name);
  });
}

void Service::Impl::count(const bind::Binding* binding,
                          std::optional<FailureCode> outcome) noexcept {
  const auto it = outcomes_.find(binding);
  if (it == outcomes_.end()) return;
  it->second->counts[outcome ? 1 + static_cast<int>(*outcome) : 0].fetch_add(1);
}

json::object Service::Impl::refusal(std::string message) const {
  return command_result(std::nullopt,
                        Failure{FailureCode::invalid_request, std::move(message), nullptr},
                        options_.result_budget);
}

json::object Service::Impl::no_such_command(const std::string& name) const {
  return command_result(
      std::nullopt,
      Failure{FailureCode::no_such_tool,
              "No command tool is named " + name + " (search_tools lists them).", nullptr},
      options_.result_budget);
}

}  // namespace corral::mcp
