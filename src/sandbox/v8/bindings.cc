#include <map>

#include "sandbox/v8/bindings.hpp"
#include "sandbox/v8/values.hpp"

namespace corral::sandbox::v8engine {
namespace {

enum Channel : int32_t { kStdout = 0, kStderr = 1 };

CappedOutput& channel_of(RunState& run, int32_t channel) {
  return channel == kStderr ? run.err : run.out;
}

// A line cut for its channel's bound ends where it was cut, as a line cut
// by the channel itself does.
void write_line(RunState& run, int32_t channel, std::string line, bool cut) {
  if (cut) {
    channel_of(run, channel).write_cut(line);
    return;
  }
  line.push_back('\n');
  channel_of(run, channel).write(line);
}

// How much of a line is worth formatting: what the channel still keeps (a
// line longer than that is cut there anyway), or with no cap, the most a
// run may hold.
std::size_t line_bound(const RunState& run, const CappedOutput& channel) {
  const std::uint64_t most = run.options.memory_limit.value_or(kMaxHostCopyBytes);
  return static_cast<std::size_t>(std::min(channel.room().value_or(most), most));
}

void console_write(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  RunState* run = V8Engine::from(isolate)->current();
  if (!run) return;
  const int32_t channel = info.Data().As<v8::Int32>()->Value();
  std::string line;
  bool cut = false;
  if (!format_console_line(isolate->GetCurrentContext(), info, 0, line,
                           line_bound(*run, channel_of(*run, channel)), &cut)) {
    return;
  }
  write_line(*run, channel, std::move(line), cut);
}

void console_assert(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  RunState* run = V8Engine::from(isolate)->current();
  if (!run || (info.Length() > 0 && info[0]->BooleanValue(isolate))) return;
  std::string line = "Assertion failed";
  std::string rest;
  bool cut = false;
  if (!format_console_line(isolate->GetCurrentContext(), info, 1, rest, line_bound(*run, run->err),
                           &cut)) {
    return;
  }
  if (!rest.empty()) line += ": " + rest;
  write_line(*run, kStderr, std::move(line), cut);
}

void missing_tool_call(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  V8Engine* engine = V8Engine::from(isolate);
  RunState* run = engine->current();
  if (!run) return;
  std::string bound;
  for (const auto& tool : run->registry.tools) bound += (bound.empty() ? "" : ", ") + tool.path;
  engine->throw_coded(FailureCode::no_such_tool, "no tool named " +
                                                     utf8(isolate, info.Data().As<v8::String>()) +
                                                     " is bound (bound tools: " + bound + ")");
}

// Unknown names on a tool namespace resolve to a function that fails with
// no_such_tool, so a misspelt call says what went wrong. Only names found
// nowhere on the object or its prototype chain reach this interceptor.
void missing_tool_getter(v8::Local<v8::Name> property,
                         const v8::PropertyCallbackInfo<v8::Value>& info) {
  if (!property->IsString()) return;
  v8::Isolate* isolate = info.GetIsolate();
  const std::string name = utf8(isolate, property.As<v8::String>());
  // Probes that generic code makes (await, JSON, inspection) stay undefined.
  if (name == "then" || name == "toJSON" || name == "inspect" || name == "constructor") return;
  const std::string path = utf8(isolate, info.Data().As<v8::String>()) + "." + name;
  v8::Local<v8::Function> stub;
  if (v8::Function::New(isolate->GetCurrentContext(), missing_tool_call, v8_string(isolate, path),
                        0, v8::ConstructorBehavior::kThrow)
          .ToLocal(&stub)) {
    info.GetReturnValue().Set(stub);
  }
}

// Counts a call against max_tool_calls; past it the run is stopped and
// the call is not made.
bool take_tool_call(V8Engine& engine, RunState& run) {
  if (run.options.max_tool_calls && run.tool_calls >= *run.options.max_tool_calls) {
    run.verdict_message = "the run made more than " + std::to_string(*run.options.max_tool_calls) +
                          " tool calls (max_tool_calls)";
    engine.stop(FailureCode::tool_error);
    return false;
  }
  ++run.tool_calls;
  return true;
}

// The call's one argument as JSON, "null" without one. False when the call
// ends here: tool_argument thrown, guest code threw, or the run was stopped.
bool tool_arguments(const v8::FunctionCallbackInfo<v8::Value>& info, V8Engine& engine,
                    const RunState& run, const ToolEntry& tool, std::string& args) {
  if (info.Length() > 1) {
    engine.throw_coded(
        FailureCode::tool_argument,
        tool.path + " takes one argument (a JSON value), not " + std::to_string(info.Length()));
    return false;
  }
  args = "null";
  if (info.Length() == 0 || info[0]->IsUndefined()) return true;
  args.clear();
  std::string why;
  switch (write_json(info.GetIsolate()->GetCurrentContext(), info[0], args, why,
                     engine.json_bounds(run))) {
    case JsonStatus::ok:
      return true;
    case JsonStatus::exception:
    case JsonStatus::stopped:
      return false;
    case JsonStatus::unserializable:
      engine.throw_coded(FailureCode::tool_argument,
                         "the argument of " + tool.path + " has no JSON form: " + why);
      return false;
    case JsonStatus::too_large:
      engine.throw_coded(FailureCode::tool_argument,
                         "the argument of " + tool.path + " is too large as JSON: " + why);
      return false;
  }
  return true;
}

// A sync tool runs on this thread; its JSON answer is the call's value.
void call_sync_tool(const v8::FunctionCallbackInfo<v8::Value>& info, V8Engine& engine,
                    const RunState& run, const ToolEntry& tool, const std::string& args) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  std::string result;
  const bool answered = call_sync_tool(tool, args, result);
  if (run.stopped()) return;  // the deadline passed while the tool ran
  if (!answered) {
    engine.throw_coded(FailureCode::tool_error, result);
    return;
  }
  v8::Local<v8::Value> value;
  bool parsed = false;
  {
    v8::TryCatch inner(isolate);
    parsed = v8::JSON::Parse(context, v8_string(isolate, result)).ToLocal(&value);
  }
  if (!parsed) {
    engine.throw_coded(FailureCode::tool_error, tool.path + " returned invalid JSON");
    return;
  }
  info.GetReturnValue().Set(value);
}

// An async tool answers through the run's mailbox; the call's value is a
// promise the run loop settles with that answer.
void call_async_tool(const v8::FunctionCallbackInfo<v8::Value>& info, RunState& run,
                     const ToolEntry& tool, std::string args) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Promise::Resolver> resolver;
  if (!v8::Promise::Resolver::New(isolate->GetCurrentContext()).ToLocal(&resolver)) return;
  const std::uint64_t call_id = run.next_call_id++;
  run.pending.emplace(call_id, v8::Global<v8::Promise::Resolver>(isolate, resolver));
  auto state = std::make_shared<ToolReply::State>();
  state->mailbox = run.mailbox;
  state->call_id = call_id;
  start_async_tool(tool, std::move(args), ToolReply(state));
  info.GetReturnValue().Set(resolver->GetPromise());
}

void tool_call(const v8::FunctionCallbackInfo<v8::Value>& info) {
  V8Engine* engine = V8Engine::from(info.GetIsolate());
  RunState* run = engine->current();
  if (!run) return;
  const ToolEntry& tool = run->registry.tools[info.Data().As<v8::Uint32>()->Value()];
  if (!take_tool_call(*engine, *run)) return;
  std::string args;
  if (!tool_arguments(info, *engine, *run, tool, args)) return;
  if (tool.sync) {
    call_sync_tool(info, *engine, *run, tool, args);
  } else {
    call_async_tool(info, *run, tool, std::move(args));
  }
}

v8::Local<v8::FunctionTemplate> function(v8::Isolate* isolate, v8::FunctionCallback callback,
                                         v8::Local<v8::Value> data, std::string_view name) {
  v8::Local<v8::FunctionTemplate> fn = v8::FunctionTemplate::New(
      isolate, callback, data, v8::Local<v8::Signature>(), 0, v8::ConstructorBehavior::kThrow);
  fn->SetClassName(v8_string(isolate, name));
  return fn;
}

}  // namespace

v8::Local<v8::ObjectTemplate> make_console_template(v8::Isolate* isolate) {
  v8::Local<v8::ObjectTemplate> console = v8::ObjectTemplate::New(isolate);
  for (const char* name : {"log", "info", "debug", "dir", "trace"}) {
    console->Set(v8_string(isolate, name),
                 function(isolate, console_write, v8::Int32::New(isolate, kStdout), name));
  }
  for (const char* name : {"warn", "error"}) {
    console->Set(v8_string(isolate, name),
                 function(isolate, console_write, v8::Int32::New(isolate, kStderr), name));
  }
  console->Set(v8_string(isolate, "assert"),
               function(isolate, console_assert, v8::Local<v8::Value>(), "assert"));
  return console;
}

v8::Local<v8::ObjectTemplate> make_global_template(v8::Isolate* isolate, const Registry& registry) {
  v8::Local<v8::ObjectTemplate> global = v8::ObjectTemplate::New(isolate);

  // Namespaces ("codemode" in "codemode.search") become objects whose
  // unknown members fail with no_such_tool.
  std::map<std::string, v8::Local<v8::ObjectTemplate>> namespaces;
  auto namespace_for = [&](const std::string& path) {
    auto it = namespaces.find(path);
    if (it != namespaces.end()) return it->second;
    v8::Local<v8::ObjectTemplate> object = v8::ObjectTemplate::New(isolate);
    object->SetHandler(v8::NamedPropertyHandlerConfiguration(
        missing_tool_getter, nullptr, nullptr, nullptr, nullptr, v8_string(isolate, path),
        v8::PropertyHandlerFlags::kNonMasking));
    namespaces.emplace(path, object);
    return object;
  };
  for (std::size_t i = 0; i < registry.tools.size(); ++i) {
    const std::string& path = registry.tools[i].path;
    const std::size_t last_dot = path.rfind('.');
    const std::string leaf = last_dot == std::string::npos ? path : path.substr(last_dot + 1);
    v8::Local<v8::ObjectTemplate> parent =
        last_dot == std::string::npos ? global : namespace_for(path.substr(0, last_dot));
    parent->Set(v8_string(isolate, leaf),
                function(isolate, tool_call, v8::Uint32::NewFromUnsigned(isolate, i), leaf));
  }
  // Attach namespaces to their parents, deepest last so every parent exists.
  std::vector<std::string> paths;
  for (const auto& entry : namespaces) paths.push_back(entry.first);
  for (const std::string& path : paths) {
    std::string child = path;
    for (;;) {
      const std::size_t dot = child.rfind('.');
      if (dot == std::string::npos) break;
      namespace_for(child.substr(0, dot));
      child = child.substr(0, dot);
    }
  }
  for (const auto& [path, object] : namespaces) {
    const std::size_t dot = path.rfind('.');
    if (dot == std::string::npos) {
      global->Set(v8_string(isolate, path), object);
    } else {
      namespaces.at(path.substr(0, dot))->Set(v8_string(isolate, path.substr(dot + 1)), object);
    }
  }
  return global;
}

}  // namespace corral::sandbox::v8engine
