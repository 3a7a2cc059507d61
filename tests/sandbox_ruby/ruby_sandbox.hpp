// tests/sandbox_ruby/ruby_sandbox.hpp: a Sandbox whose guests are Ruby.
#pragma once

#include <memory>
#include <stdexcept>

#include "corral/sandbox.hpp"
#include "sandbox/engine.hpp"
#include "sandbox/ruby/engine_ruby.hpp"

namespace corral::sandbox::testing {

// Drives the Ruby engine the way Sandbox does (registry, seal, outcome to
// Execution or exception).
class RubySandbox {
 public:
  explicit RubySandbox(Options options = {}) : options_(options) {
    validate(options_);
    engine_ = make_ruby_engine(options_);
  }
  RubySandbox& bind(std::string path, SyncTool tool) {
    if (sealed_) throw std::invalid_argument("bind after the first run");
    check(path);
    registry_.tools.push_back(ToolEntry{std::move(path), std::move(tool), nullptr});
    return *this;
  }
  RubySandbox& bind_async(std::string path, AsyncTool tool) {
    if (sealed_) throw std::invalid_argument("bind after the first run");
    check(path);
    registry_.tools.push_back(ToolEntry{std::move(path), nullptr, std::move(tool)});
    return *this;
  }
  RubySandbox& preload(std::string name, std::string code) {
    if (sealed_) throw std::invalid_argument("preload after the first run");
    registry_.snippets.push_back(Snippet{std::move(name), std::move(code)});
    return *this;
  }
  Execution eval(std::string_view code) { return go(RunRequest::Kind::eval, code, "", "[]"); }
  Execution execute(std::string_view code) { return go(RunRequest::Kind::execute, code, "", "[]"); }
  Execution run(std::string_view entrypoint, std::string_view args = "[]") {
    return go(RunRequest::Kind::call, "", entrypoint, args);
  }
  void cancel() { engine_->cancel(); }
  bool last_run_trapped() const { return trapped_; }

 private:
  void check(const std::string& path) {
    std::vector<std::string> bound;
    for (const ToolEntry& tool : registry_.tools) bound.push_back(tool.path);
    check_ruby_tool_path(path, bound);
  }
  Execution go(RunRequest::Kind kind, std::string_view code, std::string_view entry,
               std::string_view args) {
    sealed_ = true;
    RunRequest request;
    request.entry = std::chrono::steady_clock::now();
    request.kind = kind;
    request.code = std::string(code);
    request.entrypoint = std::string(entry);
    request.args_json = std::string(args);
    RunOutcome outcome = engine_->run(request, registry_);
    trapped_ = outcome.failure == FailureCode::timeout ||
               outcome.failure == FailureCode::memory_limit ||
               outcome.failure == FailureCode::cancelled;
    if (!outcome.failure) return Execution(std::move(outcome.data));
    throw_failure(*outcome.failure, outcome.message,
                  std::make_shared<const Execution>(std::move(outcome.data)));
  }
  Options options_;
  std::unique_ptr<Engine> engine_;
  Registry registry_;
  bool sealed_ = false;
  bool trapped_ = false;
};

}  // namespace corral::sandbox::testing
