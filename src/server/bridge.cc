#include "server/bridge.hpp"

#include "server/rpc.hpp"

namespace corral::server {

pool::Dispatcher make_dispatcher(std::shared_ptr<Run> run) {
  return [run](const std::string& name, std::string args_json, pool::ToolAnswer answer) {
    if (run->settled.load()) {
      answer.reject(rpc::kExecutionCompleted);
      return;
    }
    std::shared_ptr<Caller> caller = run->caller.lock();
    if (!caller) {
      answer.reject(rpc::kCallerGone);
      return;
    }
    caller->call_tool(run, name, std::move(args_json), std::move(answer));
  };
}

pool::Completion make_completion(std::shared_ptr<Run> run,
                                 std::function<void(const Run&, const pool::Outcome&)> orphaned) {
  return [run, orphaned = std::move(orphaned)](pool::Outcome outcome) {
    run->settled.store(true);
    if (std::shared_ptr<Caller> caller = run->caller.lock()) {
      caller->deliver(run, std::move(outcome));
    } else if (orphaned) {
      orphaned(*run, outcome);
    }
  };
}

}  // namespace corral::server
