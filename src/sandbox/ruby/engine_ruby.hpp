// src/sandbox/ruby/engine_ruby.hpp: the Engine that runs Ruby guests (mruby).
//
// Each Ruby engine owns a helper process (helper.hpp) and every run
// executes there, so a run that passes its timeout, or is cancelled, is
// ended by killing the helper, which is replaced on the next run. In a
// process that cannot start one (Hosting::may_spawn false: a locked-down
// pool worker) guests run inline, on the caller's thread (hosted.hpp).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "corral/sandbox.hpp"
#include "sandbox/engine.hpp"
#include "sandbox/hosted.hpp"
#include "sandbox/tool_paths.hpp"

namespace corral::sandbox {

// Creates the Ruby engine, helper or inline as `hosting` says. Spawns
// nothing until the first run.
std::unique_ptr<Engine> make_ruby_engine(const Options& options, const Hosting& hosting);

// The Ruby form of a bound tool path: every segment but the last is a
// constant (its first letter upper-cased), the last is the method.
// "KV.get" is `KV.get`, "kv.get" is `Kv.get`; "tools.search.query" and
// "Tools::Search.query" are `Tools::Search.query`. Throws
// std::invalid_argument for a path with fewer than two segments or a
// segment that is not an ASCII identifier.
std::string ruby_tool_path(std::string_view path);

// check_ruby_tool_path (tool_paths.hpp): Sandbox::bind's rule for a Ruby
// sandbox: a Ruby tool path (above) whose first constant is not one Ruby or
// corral defines (String, Math, Kernel, Corral, ...) and that is not bound
// already (in either spelling).

}  // namespace corral::sandbox
