#include <cctype>

#include "sandbox/v8/bindings.hpp"
#include "sandbox/v8/values.hpp"

#include "sandbox/identifier.hpp"
#include "sandbox/typescript/strip.hpp"

namespace corral::sandbox::v8engine {
namespace {

// Math.random as a fixed stream (mulberry32) for the hermetic profile.
constexpr std::string_view kHermeticBootstrap = R"JS(
Object.defineProperty(Math, 'random', {
  value: (() => {
    let state = 0x2F6B5A3D;
    return function random() {
      state = (state + 0x6D2B79F5) | 0;
      let t = Math.imul(state ^ (state >>> 15), 1 | state);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  })(),
  writable: true, configurable: true, enumerable: false,
});
)JS";

// Every profile. Builtins that loop natively over a guest-sized input never
// see V8's termination request, so a timeout or memory stop waits for them
// to finish (tens of seconds and gigabytes for some inputs). The ones with
// a JavaScript-visible loop are re-routed through a generator here: its
// resumption is a JavaScript call, where termination lands.
//  - Intl.Segmenter: `[...segmenter.segment(text)]` (spread, Array.from)
//    walks the segments inside the builtin.
constexpr std::string_view kGuardBootstrap = R"JS(
(() => {
  // Builtins that would end the whole process, or loop past any timeout,
  // on one huge length are refused it first (a RangeError, as V8 gives for
  // other arrays too long to make).
  // Array.prototype.sort copies an array-like into one backing store of
  // its length: past V8's largest (2**27 - 2 elements) that is a fatal
  // "invalid array length" OOM, not an exception (seen from
  // `Array.prototype.sort.call({length: 2**28})`). JSON.stringify walks a
  // replacer array index by index without checking for termination
  // (`a[2**32-2] = 1; JSON.stringify({}, a)`).
  const apply = Reflect.apply;
  const isArray = Array.isArray;
  const RangeError_ = RangeError;
  const arrayProto = Array.prototype;
  const sort = arrayProto.sort;
  const kMaxSortLength = 134217725;
  Object.defineProperty(arrayProto, 'sort', {
    value: {
      sort(compare) {
        if (this !== null && this !== undefined && Object(this).length > kMaxSortLength)
          throw new RangeError_('Invalid array length');
        return apply(sort, this, arguments);
      },
    }.sort,
    writable: true, configurable: true, enumerable: false,
  });
  // Splitting into single characters makes one element per character: past
  // the same largest backing store, the same fatal OOM
  // (`'x'.repeat(2**28).split('')`).
  const stringProto = String.prototype;
  const split = stringProto.split;
  const String_ = String;
  Object.defineProperty(stringProto, 'split', {
    value: {
      split(separator, limit) {
        if (separator === '' && (limit === undefined || limit > kMaxSortLength) &&
            this !== null && this !== undefined && String_(this).length > kMaxSortLength)
          throw new RangeError_('Invalid array length');
        return apply(split, this, arguments);
      },
    }.split,
    writable: true, configurable: true, enumerable: false,
  });
  const json = JSON;
  const stringify = json.stringify;
  const kMaxReplacerLength = 1 << 24;
  Object.defineProperty(json, 'stringify', {
    value: {
      stringify(value, replacer, space) {
        if (isArray(replacer) && replacer.length > kMaxReplacerLength)
          throw new RangeError_('JSON.stringify: a replacer array longer than ' +
                                kMaxReplacerLength + ' elements');
        return apply(stringify, json, arguments);
      },
    }.stringify,
    writable: true, configurable: true, enumerable: false,
  });
})();
(() => {
  const Segmenter = globalThis.Intl && Intl.Segmenter;
  if (typeof Segmenter !== 'function') return;
  const proto = Segmenter.prototype;
  const segment = proto.segment;
  const apply = Reflect.apply;
  const getPrototypeOf = Object.getPrototypeOf;
  const iterator = Symbol.iterator;
  let guarded = false;
  // The Segments prototype is reachable only through a Segments object,
  // and making one here would cost every context an ICU break iterator:
  // it is guarded on first use instead.
  const guard = (segments) => {
    const segmentsProto = getPrototypeOf(segments);
    const native = segmentsProto[iterator];
    Object.defineProperty(segmentsProto, iterator, {
      value: {
        *[iterator]() {
          const it = apply(native, this, []);
          const next = it.next;
          for (;;) {
            const step = apply(next, it, []);
            if (step.done) return;
            yield step.value;
          }
        },
      }[iterator],
      writable: true, configurable: true, enumerable: false,
    });
    guarded = true;
  };
  Object.defineProperty(proto, 'segment', {
    value: {
      segment(input) {
        const segments = apply(segment, this, [input]);
        if (!guarded) guard(segments);
        return segments;
      },
    }.segment,
    writable: true, configurable: true, enumerable: false,
  });
})();
)JS";

v8::MaybeLocal<v8::String> source_string(v8::Isolate* isolate, std::string_view text) {
  if (text.size() > static_cast<std::size_t>(v8::String::kMaxLength)) return {};
  return v8::String::NewFromUtf8(isolate, text.data(), v8::NewStringType::kNormal,
                                 static_cast<int>(text.size()));
}

std::string located_message(v8::Local<v8::Context> context, v8::Local<v8::Message> message) {
  v8::Isolate* isolate = context->GetIsolate();
  std::string text = utf8(isolate, message->Get());
  v8::Local<v8::Value> resource = message->GetScriptResourceName();
  const int line = message->GetLineNumber(context).FromMaybe(0);
  if (resource->IsString() && line > 0) {
    text += " at " + utf8(isolate, resource.As<v8::String>()) + ":" + std::to_string(line) + ":" +
            std::to_string(message->GetStartColumn() + 1);
  }
  return text;
}

// Compiles `code` bound to the current context. On a syntax error returns
// empty and leaves the error text in `error` (the TryCatch is reset).
v8::MaybeLocal<v8::Script> compile(v8::Local<v8::Context> context, v8::TryCatch& try_catch,
                                   std::string_view code, std::string_view name, int line_offset,
                                   int column_offset, std::string& error) {
  v8::Isolate* isolate = context->GetIsolate();
  v8::Local<v8::String> source;
  if (!source_string(isolate, code).ToLocal(&source)) {
    error = "the code is too large to compile";
    return {};
  }
  v8::ScriptOrigin origin(isolate, v8_string(isolate, name), line_offset, column_offset);
  v8::ScriptCompiler::Source script_source(source, origin);
  v8::Local<v8::Script> script;
  if (v8::ScriptCompiler::Compile(context, &script_source).ToLocal(&script)) return script;
  error = try_catch.Message().IsEmpty() ? "the code does not compile"
                                        : located_message(context, try_catch.Message());
  try_catch.Reset();
  return {};
}

// Removes a surrounding Markdown code fence and trailing semicolons.
std::string_view strip_code(std::string_view code) {
  auto trim = [](std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
  };
  code = trim(code);
  if (code.substr(0, 3) == "```" && code.size() >= 6 && code.substr(code.size() - 3) == "```") {
    const std::size_t first_newline = code.find('\n');
    if (first_newline != std::string_view::npos && first_newline < code.size() - 3) {
      code = trim(code.substr(first_newline + 1, code.size() - 3 - first_newline - 1));
    }
  }
  while (!code.empty() &&
         (code.back() == ';' || std::isspace(static_cast<unsigned char>(code.back())))) {
    code.remove_suffix(1);
  }
  return code;
}

// The JavaScript a run compiles from `code`, in `out`: `code` itself, or for
// TypeScript guests the types erased in place (kept in `storage`). Syntax
// with no erasable form is false, with the compile_error message in
// `error`. Source the stripper cannot read goes to V8 as written, whose
// syntax error then names the line.
bool guest_javascript(const RunContext& rc, std::string_view code, std::string_view name,
                      std::string& storage, std::string_view& out, std::string& error) {
  out = code;
  if (rc.engine.options().language != Language::typescript) return true;
  typescript::StripResult stripped = typescript::strip_types(code);
  if (stripped.status == typescript::StripResult::Status::refused) {
    error = "TypeScript: " + stripped.reason + " at " + std::string(name) + ":" +
            std::to_string(stripped.line) + ":" + std::to_string(stripped.column);
    return false;
  }
  storage = std::move(stripped.code);
  out = storage;
  return true;
}

// The same for the run's own code: a refusal is the run's compile_error.
bool guest_javascript(RunContext& rc, std::string_view code, std::string& storage,
                      std::string_view& out) {
  std::string error;
  if (guest_javascript(rc, code, "(eval)", storage, out, error)) return true;
  rc.outcome.failure = FailureCode::compile_error;
  rc.outcome.message = std::move(error);
  return false;
}

// Compiles `code` once for the isolate; on failure returns an empty Global
// and leaves the error text in `error` (the TryCatch is reset).
v8::Global<v8::UnboundScript> compile_unbound(v8::Local<v8::Context> context,
                                              v8::TryCatch& try_catch, std::string_view code,
                                              std::string_view name, std::string& error) {
  v8::Isolate* isolate = context->GetIsolate();
  v8::ScriptOrigin origin(isolate, v8_string(isolate, name));
  v8::ScriptCompiler::Source source(v8_string(isolate, code), origin);
  v8::Local<v8::UnboundScript> unbound;
  if (v8::ScriptCompiler::CompileUnboundScript(isolate, &source).ToLocal(&unbound)) {
    return v8::Global<v8::UnboundScript>(isolate, unbound);
  }
  error = try_catch.Message().IsEmpty() ? "does not compile"
                                        : located_message(context, try_catch.Message());
  try_catch.Reset();
  return v8::Global<v8::UnboundScript>();
}

bool run_unbound(v8::Local<v8::Context> context, const v8::Global<v8::UnboundScript>& unbound) {
  v8::Local<v8::Value> ignored;
  return unbound.Get(context->GetIsolate())->BindToCurrentContext()->Run(context).ToLocal(&ignored);
}

bool ensure_compiled(RunContext& rc, const Registry& registry) {
  V8Engine::CompiledScripts& scripts = rc.engine.scripts();
  if (scripts.compiled) return true;
  for (const Snippet& snippet : registry.snippets) {
    std::string snippet_error;
    const std::string name = "(snippet:" + snippet.name + ")";
    std::string storage;
    std::string_view code;
    if (!guest_javascript(rc, snippet.code, name, storage, code, snippet_error)) {
      scripts.snippets.emplace_back();
      scripts.snippet_errors.push_back(snippet_error);
      continue;
    }
    scripts.snippets.push_back(
        compile_unbound(rc.context, rc.try_catch, code, name, snippet_error));
    scripts.snippet_errors.push_back(snippet_error);
    if (rc.run.stopped()) {
      // Stopped while compiling: not a verdict on the snippet; retry next run.
      scripts.snippets.clear();
      scripts.snippet_errors.clear();
      return false;
    }
  }
  scripts.compiled = true;
  return true;
}

bool call_function(RunContext& rc, v8::Local<v8::Value> callee, int argc,
                   v8::Local<v8::Value>* argv) {
  return callee.As<v8::Function>()
      ->Call(rc.context, rc.context->Global(), argc, argv)
      .ToLocal(&rc.result);
}

// prefix + code + suffix, built by appending: GCC 12 at -O3 reports a false
// -Wrestrict overlap inside the inlined `const char* + std::string` operator.
std::string wrapped(std::string_view prefix, std::string_view code, std::string_view suffix) {
  std::string text;
  text.reserve(prefix.size() + code.size() + suffix.size());
  text.append(prefix).append(code).append(suffix);
  return text;
}

bool run_execute(RunContext& rc, std::string_view raw) {
  std::string storage;
  std::string_view code;
  if (!guest_javascript(rc, strip_code(raw), storage, code)) return false;
  std::string expression_error;
  std::string script_error;
  std::string body_error;
  v8::Local<v8::Script> script;
  // 1. An expression: a function to call, or a value.
  if (compile(rc.context, rc.try_catch, wrapped("(", code, "\n)"), "(eval)", 0, -1,
              expression_error)
          .ToLocal(&script)) {
    if (!script->Run(rc.context).ToLocal(&rc.result)) return false;
    if (rc.result->IsFunction()) return call_function(rc, rc.result, 0, nullptr);
    return true;
  }
  if (rc.run.stopped()) return false;
  // 2. Statements: the completion value.
  if (compile(rc.context, rc.try_catch, code, "(eval)", 0, 0, script_error).ToLocal(&script)) {
    return script->Run(rc.context).ToLocal(&rc.result);
  }
  if (rc.run.stopped()) return false;
  // 3. A function body that may await and return.
  constexpr std::string_view kPrefix = "(async () => {";
  if (compile(rc.context, rc.try_catch, wrapped(kPrefix, code, "\n})()"), "(eval)", 0,
              -static_cast<int>(kPrefix.size()), body_error)
          .ToLocal(&script)) {
    return script->Run(rc.context).ToLocal(&rc.result);
  }
  rc.outcome.failure = FailureCode::compile_error;
  rc.outcome.message = body_error;
  return false;
}

bool run_call(RunContext& rc, const RunRequest& request) {
  v8::Isolate* isolate = rc.engine.isolate();
  v8::Local<v8::Value> callee;
  if (is_identifier(request.entrypoint)) {
    // Snippet functions live on the global object; let/const/class bindings
    // live in the script scope, which only a script can read.
    std::string ignored;
    v8::Local<v8::Script> lookup;
    if (compile(rc.context, rc.try_catch,
                "typeof " + request.entrypoint + " === 'function' ? " + request.entrypoint +
                    " : undefined",
                "(corral:entrypoint)", 0, 0, ignored)
            .ToLocal(&lookup)) {
      if (!lookup->Run(rc.context).ToLocal(&callee)) return false;
    }
  }
  if (callee.IsEmpty() || !callee->IsFunction()) {
    std::string available;
    v8::Local<v8::Array> names;
    if (rc.context->Global()->GetOwnPropertyNames(rc.context).ToLocal(&names)) {
      for (uint32_t i = 0; i < names->Length(); ++i) {
        v8::Local<v8::Value> name;
        v8::Local<v8::Value> value;
        if (!names->Get(rc.context, i).ToLocal(&name) || !name->IsString()) continue;
        if (!rc.context->Global()->Get(rc.context, name).ToLocal(&value)) continue;
        if (value->IsFunction() && name.As<v8::String>()->Length() > 0) {
          const std::string text = utf8(isolate, name.As<v8::String>());
          if (text == "console") continue;
          available += (available.empty() ? "" : ", ") + text;
        }
      }
    }
    rc.outcome.failure = FailureCode::invalid_request;
    rc.outcome.message =
        "no entrypoint named " + request.entrypoint +
        " is defined by the snippets (functions: " + (available.empty() ? "none" : available) + ")";
    return false;
  }
  v8::Local<v8::Value> args;
  {
    v8::TryCatch inner(isolate);
    if (!v8::JSON::Parse(rc.context, v8_string(isolate, request.args_json)).ToLocal(&args) ||
        !args->IsArray()) {
      rc.outcome.failure = FailureCode::invalid_request;
      rc.outcome.message = "the arguments are not a JSON array";
      return false;
    }
  }
  v8::Local<v8::Array> array = args.As<v8::Array>();
  std::vector<v8::Local<v8::Value>> argv;
  for (uint32_t i = 0; i < array->Length(); ++i) {
    v8::Local<v8::Value> element;
    if (!array->Get(rc.context, i).ToLocal(&element)) return false;
    argv.push_back(element);
  }
  return call_function(rc, callee, static_cast<int>(argv.size()), argv.data());
}

}  // namespace

bool install_globals(V8Engine& engine, v8::Local<v8::Context> context) {
  v8::Isolate* isolate = engine.isolate();
  v8::TryCatch try_catch(isolate);
  v8::Local<v8::Object> global = context->Global();
  v8::Local<v8::Object> console;
  if (!engine.console_template()->NewInstance(context).ToLocal(&console) ||
      !global
           ->DefineOwnProperty(context, v8::String::NewFromUtf8Literal(isolate, "console"), console,
                               v8::DontEnum)
           .FromMaybe(false)) {
    return false;
  }
  // A FinalizationRegistry's callback runs from a V8 task after its run has
  // ended (no watchdog, nobody's output), and an interrupted cleanup is
  // retried forever. Its timing is the GC's, so it has no place in a
  // deterministic run either. Without the constructor no registry exists.
  if (!global->Delete(context, v8::String::NewFromUtf8Literal(isolate, "FinalizationRegistry"))
           .FromMaybe(false)) {
    return false;
  }
  v8::Global<v8::UnboundScript>& guard = engine.scripts().guard_bootstrap;
  if (guard.IsEmpty()) {
    std::string error;
    guard = compile_unbound(context, try_catch, kGuardBootstrap, "(corral:guard)", error);
    if (guard.IsEmpty()) return false;  // terminated while compiling
  }
  if (!run_unbound(context, guard)) return false;
  if (engine.options().profile != Profile::hermetic) return true;
  v8::Global<v8::UnboundScript>& bootstrap = engine.scripts().hermetic_bootstrap;
  if (bootstrap.IsEmpty()) {
    std::string error;
    bootstrap = compile_unbound(context, try_catch, kHermeticBootstrap, "(corral:hermetic)", error);
    if (bootstrap.IsEmpty()) return false;  // terminated while compiling
  }
  return run_unbound(context, bootstrap);
}

bool run_guest(RunContext& rc, const RunRequest& request, const Registry& registry) {
  if (!ensure_compiled(rc, registry)) return false;
  V8Engine::CompiledScripts& scripts = rc.engine.scripts();
  for (std::size_t i = 0; i < scripts.snippets.size(); ++i) {
    if (scripts.snippets[i].IsEmpty()) {
      rc.outcome.failure = FailureCode::compile_error;
      rc.outcome.message = "snippet " + registry.snippets[i].name +
                           " does not compile: " + scripts.snippet_errors[i];
      return false;
    }
    if (!run_unbound(rc.context, scripts.snippets[i])) return false;
  }

  switch (request.kind) {
    case RunRequest::Kind::eval: {
      std::string error;
      std::string storage;
      std::string_view code;
      if (!guest_javascript(rc, request.code, storage, code)) return false;
      v8::Local<v8::Script> script;
      if (!compile(rc.context, rc.try_catch, code, "(eval)", 0, 0, error).ToLocal(&script)) {
        if (!rc.run.stopped()) {
          rc.outcome.failure = FailureCode::compile_error;
          rc.outcome.message = error;
        }
        return false;
      }
      return script->Run(rc.context).ToLocal(&rc.result);
    }
    case RunRequest::Kind::execute:
      return run_execute(rc, request.code);
    case RunRequest::Kind::call:
      return run_call(rc, request);
  }
  return false;
}

void classify_caught(RunContext& rc) {
  if (!rc.try_catch.HasCaught() || rc.try_catch.HasTerminated()) {
    if (!rc.outcome.failure && !rc.run.stopped()) {
      rc.outcome.failure = FailureCode::internal;
      rc.outcome.message = "the run ended without a value or an exception";
    }
    return;
  }
  classify_exception(rc, rc.try_catch.Exception(), rc.try_catch.Message());
}

void classify_exception(RunContext& rc, v8::Local<v8::Value> exception,
                        v8::Local<v8::Message> message) {
  v8::Isolate* isolate = rc.engine.isolate();
  FailureCode code = FailureCode::guest_error;
  std::string text;
  // Describing the exception may run guest code (a toString override): it
  // stays under the run's watchdog, and its own failures are contained.
  v8::TryCatch inner(isolate);
  if (exception->IsObject()) {
    v8::Local<v8::Object> object = exception.As<v8::Object>();
    v8::Local<v8::Value> coded;
    if (object->GetPrivate(rc.context, rc.engine.failure_code_key()).ToLocal(&coded) &&
        coded->IsString()) {
      if (auto parsed = failure_code_from_string(utf8(isolate, coded.As<v8::String>()))) {
        code = *parsed;
      }
    }
    v8::Local<v8::Value> stack;
    if (exception->IsNativeError() &&
        object->Get(rc.context, v8_string(isolate, "stack")).ToLocal(&stack) && stack->IsString()) {
      text = utf8(isolate, stack.As<v8::String>());
    }
  }
  if (text.empty()) {
    v8::Local<v8::String> as_text;
    if (exception->ToString(rc.context).ToLocal(&as_text)) {
      text = "Uncaught " + utf8(isolate, as_text);
    } else {
      text = "Uncaught exception (it could not be converted to text)";
    }
    if (!message.IsEmpty()) {
      const int line = message->GetLineNumber(rc.context).FromMaybe(0);
      v8::Local<v8::Value> resource = message->GetScriptResourceName();
      if (line > 0 && resource->IsString()) {
        text += " at " + utf8(isolate, resource.As<v8::String>()) + ":" + std::to_string(line);
      }
    }
  }
  if (!rc.outcome.failure) {
    rc.outcome.failure = code;
    rc.outcome.message = std::move(text);
  }
}

}  // namespace corral::sandbox::v8engine
