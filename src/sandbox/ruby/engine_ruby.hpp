// src/sandbox/ruby/engine_ruby.hpp: the Engine that runs Ruby guests (mruby).
//
// By default each Ruby engine owns a helper process (helper.hpp) and every
// run executes there, so a run that passes its timeout, or is cancelled, is
// ended by killing the helper, which is replaced on the next run. A process
// that cannot fork (a locked-down pool worker) switches the whole process to
// inline runs with set_ruby_inline(true): guests then run on the caller's
// thread and only a timeout during a tool wait can be enforced from inside;
// the process itself must be the bound (the pool kills a worker that misses
// its deadline).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "corral/sandbox.hpp"
#include "sandbox/engine.hpp"

namespace corral::sandbox {

// Creates the Ruby engine. Spawns nothing until the first run.
std::unique_ptr<Engine> make_ruby_engine(const Options& options);

// Makes engines created from now on run Ruby guests inline (see above).
void set_ruby_inline(bool inline_runs) noexcept;

// StuckRun: what an inline Ruby run calls, from another thread, when its
// deadline passes or it is cancelled while the guest is still running Ruby
// (mruby cannot be interrupted). `failure` is the run's timeout or
// cancelled failure with the output and usage so far. The handler must end
// the run itself; a pooled worker reports it and exits. Without a handler
// the run goes on until the guest returns.
using StuckRun = std::function<void(const Failure& failure)>;
// Sets the handler for inline runs started on the calling thread from now
// on; an empty function removes it.
void set_ruby_stuck_handler(StuckRun handler);

// The Ruby form of a bound tool path: every segment but the last is a
// constant (its first letter upper-cased), the last is the method.
// "KV.get" is `KV.get`, "kv.get" is `Kv.get`; "tools.search.query" and
// "Tools::Search.query" are `Tools::Search.query`. Throws
// std::invalid_argument for a path with fewer than two segments or a
// segment that is not an ASCII identifier.
std::string ruby_tool_path(std::string_view path);

// Checks a path Sandbox::bind is given for a Ruby sandbox against the paths
// already bound: a Ruby tool path (above) whose first constant is not one
// Ruby or corral defines (String, Math, Kernel, Corral, ...) and that is not
// bound already (in either spelling). Throws std::invalid_argument naming
// the problem.
void check_ruby_tool_path(std::string_view path, const std::vector<std::string>& bound);

}  // namespace corral::sandbox
