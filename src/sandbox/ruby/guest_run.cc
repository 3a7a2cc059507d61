// One run of a Guest: a fresh state armed with the run's memory limit, the
// snippets and the request loaded under mrb_protect_error (run_protected),
// the value or the uncaught exception turned into a GuestResult. A stop
// (Guest::stop) longjmps back to Guest::run, which abandons the state.
#include <mruby.h>
#include <mruby/array.h>
#include <mruby/compile.h>
#include <mruby/error.h>
#include <mruby/string.h>
#include <mruby/variable.h>

#include <cctype>
#include <csetjmp>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sandbox/ruby/guest_internal.hpp"
#include "sandbox/ruby/values.hpp"

namespace corral::sandbox::ruby {
namespace {

// Calls `recv.name` with no arguments; nullopt-like false when it raised.
bool protected_call(mrb_state* mrb, mrb_value recv, const char* name, mrb_value& out) {
  struct Call {
    mrb_value recv;
    const char* name;
  } call{recv, name};
  mrb_bool failed = FALSE;
  out = mrb_protect_error(
      mrb,
      [](mrb_state* mrb, void* data) -> mrb_value {
        auto* c = static_cast<Call*>(data);
        return mrb_funcall_argv(mrb, c->recv, mrb_intern_cstr(mrb, c->name), 0, nullptr);
      },
      &call, &failed);
  mrb->exc = nullptr;
  return !failed;
}

std::string text_of(mrb_value v) {
  if (!mrb_string_p(v)) return {};
  return std::string(RSTRING_PTR(v), static_cast<std::size_t>(RSTRING_LEN(v)));
}

constexpr std::size_t kMaxMessage = 16 * 1024;

std::string_view strip_fence(std::string_view code) {
  auto trim = [](std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
  };
  std::string_view s = trim(code);
  if (s.substr(0, 3) == "```") {
    const std::size_t eol = s.find('\n');
    s = eol == std::string_view::npos ? std::string_view() : s.substr(eol + 1);
    s = trim(s);
    if (s.size() >= 3 && s.substr(s.size() - 3) == "```") s = trim(s.substr(0, s.size() - 3));
  }
  return s;
}

// Parses and runs `source`; false when it did not parse (ctx.compile_error
// set) or raised (mrb->exc set).
bool load_source(mrb_state* mrb, RunContext& ctx, const std::string& source, const char* filename,
                 mrb_value& value) {
  mrbc_context* cxt = mrbc_context_new(mrb);
  mrbc_filename(mrb, cxt, filename);
  cxt->capture_errors = TRUE;
  mrb_parser_state* parser = mrb_parse_nstring(mrb, source.data(), source.size(), cxt);
  if (!parser) {
    mrbc_context_free(mrb, cxt);
    mrb_raise(mrb, E_RUNTIME_ERROR, "the parser could not start");
    __builtin_unreachable();
  }
  if (parser->nerr > 0) {
    const auto& e = parser->error_buffer[0];
    ctx.compile_error = std::string(filename) + ":" + std::to_string(e.lineno) + ":" +
                        std::to_string(e.column) + ": " + (e.message ? e.message : "syntax error");
    mrb_parser_free(parser);
    mrbc_context_free(mrb, cxt);
    return false;
  }
  value = mrb_load_exec(mrb, parser, cxt);
  mrbc_context_free(mrb, cxt);
  return mrb->exc == nullptr;
}

// Ends the run with a failure the body found itself, not an exception.
void fail_run(RunContext& ctx, FailureCode code, std::string message) {
  ctx.result->code = static_cast<std::uint8_t>(code);
  ctx.result->message = std::move(message);
  ctx.done = true;
}

// The top-level constants the run's code defined, named in the failure of a
// call to an entry point that does not exist.
std::string constants_defined_by_run(mrb_state* mrb, const RunContext& ctx) {
  mrb_value now = mrb_funcall_argv(mrb, mrb_obj_value(mrb->object_class),
                                   mrb_intern_lit(mrb, "constants"), 0, nullptr);
  std::string available;
  for (mrb_int i = 0; i < RARRAY_LEN(now); ++i) {
    mrb_value c = RARRAY_PTR(now)[i];
    bool old = false;
    for (mrb_int j = 0; j < RARRAY_LEN(ctx.before_constants); ++j) {
      if (mrb_obj_eq(mrb, RARRAY_PTR(ctx.before_constants)[j], c)) old = true;
    }
    if (old || !mrb_symbol_p(c)) continue;
    mrb_int len = 0;
    const char* text = mrb_sym_name_len(mrb, mrb_symbol(c), &len);
    available += (available.empty() ? "" : ", ") + std::string(text, static_cast<std::size_t>(len));
  }
  return available;
}

// What Kind::call invokes: a method of the top-level self, or the `call` of
// a constant (a name that starts upper-case). False once ctx.result says
// why there is none.
bool find_entrypoint(mrb_state* mrb, RunContext& ctx, mrb_value& target, mrb_sym& method) {
  const std::string& name = ctx.request->entrypoint;
  const mrb_sym sym = mrb_intern(mrb, name.data(), name.size());
  const bool constant = !name.empty() && name[0] >= 'A' && name[0] <= 'Z';
  target = mrb_top_self(mrb);
  method = sym;
  bool found = false;
  if (constant) {
    if (mrb_const_defined_at(mrb, mrb_obj_value(mrb->object_class), sym)) {
      target = mrb_const_get(mrb, mrb_obj_value(mrb->object_class), sym);
      method = mrb_intern_lit(mrb, "call");
      found = true;
      if (!mrb_respond_to(mrb, target, method)) {
        fail_run(ctx, FailureCode::guest_error, "run: " + name + " does not respond to call");
        return false;
      }
    }
  } else {
    found = mrb_respond_to(mrb, target, sym);
  }
  if (!found) {
    const std::string available = constants_defined_by_run(mrb, ctx);
    fail_run(ctx, FailureCode::invalid_request,
             "run: no entry point named " + name +
                 " (defined: " + (available.empty() ? "none" : available) + ")");
    return false;
  }
  return true;
}

// Kind::call: the entry point, with the request's JSON array as arguments.
bool call_entrypoint(mrb_state* mrb, RunContext& ctx, mrb_value& value) {
  mrb_value args;
  if (!from_json(mrb, ctx.request->args_json, args) || !mrb_array_p(args)) {
    fail_run(ctx, FailureCode::invalid_request, "run: args must be a JSON array");
    return false;
  }
  mrb_value target;
  mrb_sym method = 0;
  if (!find_entrypoint(mrb, ctx, target, method)) return false;
  value = mrb_funcall_argv(mrb, target, method, RARRAY_LEN(args), RARRAY_PTR(args));
  return true;
}

// The request itself, once the snippets are loaded; false when its code did
// not parse, raised, or the body ended the run with a failure of its own.
bool run_request(mrb_state* mrb, RunContext& ctx, mrb_value& value) {
  switch (ctx.request->kind) {
    case RunRequest::Kind::eval:
      return load_source(mrb, ctx, ctx.request->code, "(eval)", value);
    case RunRequest::Kind::execute:
      if (!load_source(mrb, ctx, ctx.code, "(eval)", value)) return false;
      if (mrb_type(value) == MRB_TT_PROC) {
        value = mrb_funcall_argv(mrb, value, mrb_intern_lit(mrb, "call"), 0, nullptr);
      }
      return true;
    case RunRequest::Kind::call:
      return call_entrypoint(mrb, ctx, value);
  }
  return true;
}

mrb_value run_protected(mrb_state* mrb, void* data) {
  auto& ctx = *static_cast<RunContext*>(data);
  const GuestSetup& setup = ctx.guest->setup();
  mrb_value value = mrb_nil_value();
  ctx.before_constants = mrb_funcall_argv(mrb, mrb_obj_value(mrb->object_class),
                                          mrb_intern_lit(mrb, "constants"), 0, nullptr);
  mrb_gc_register(mrb, ctx.before_constants);
  for (std::size_t i = 0; i < setup.snippets.size(); ++i) {
    if (!load_source(mrb, ctx, setup.snippets[i].code, ctx.snippet_files[i].c_str(), value))
      return mrb_nil_value();
  }
  if (!run_request(mrb, ctx, value)) return mrb_nil_value();
  switch (to_json(mrb, value, ctx.value_json, ctx.why, "value", json_limit(setup))) {
    case JsonStatus::ok:
      break;
    case JsonStatus::unserializable:
      fail_run(ctx, FailureCode::unserializable_value,
               "the run's value has no JSON form: " + ctx.why);
      break;
    case JsonStatus::too_large:
      fail_run(ctx, FailureCode::memory_limit,
               "the run's value is too large as JSON: " + ctx.why +
                   (setup.memory_limit != kNone ? " (its memory limit)" : ""));
      break;
  }
  return mrb_nil_value();
}

}  // namespace

void describe_exception(mrb_state* mrb, mrb_value exc, GuestResult& result) {
  mrb_value code = mrb_obj_ptr(exc)->tt == MRB_TT_EXCEPTION
                       ? mrb_iv_get(mrb, exc, mrb_intern_cstr(mrb, kCodeIvar))
                       : mrb_nil_value();
  const char* cls = mrb_obj_classname(mrb, exc);
  std::string class_name = cls ? cls : "Exception";
  mrb_value message_value;
  std::string message = protected_call(mrb, exc, "message", message_value)
                            ? text_of(message_value)
                            : "(its message raised an exception)";
  if (message.size() > kMaxMessage) message.resize(kMaxMessage);
  if (mrb_integer_p(code)) {
    result.code = static_cast<std::uint8_t>(mrb_integer(code));
    result.message = message;
    return;
  }
  result.code = static_cast<std::uint8_t>(FailureCode::guest_error);
  mrb_value backtrace;
  std::vector<std::string> lines;
  if (protected_call(mrb, exc, "backtrace", backtrace) && mrb_array_p(backtrace)) {
    for (mrb_int i = 0; i < RARRAY_LEN(backtrace) && i < 64; ++i) {
      lines.push_back(text_of(RARRAY_PTR(backtrace)[i]));
    }
  }
  std::string text = lines.empty() ? "" : lines.front() + ": ";
  text += message + " (" + class_name + ")";
  for (std::size_t i = 1; i < lines.size(); ++i) text += "\n\tfrom " + lines[i];
  result.message = std::move(text);
}

void Guest::stop(std::uint8_t code, const char* message) {
  stop_code_ = code;
  stop_message_ = message;
  std::longjmp(stop_jump_, 1);
}

void Guest::run_body(State& state, const GuestRequest& request, GuestResult& result) {
  mrb_state* mrb = state.mrb;
  // Owned by the Guest, not this frame: a stop longjmps past this frame.
  context_ = std::make_unique<RunContext>();
  RunContext& ctx = *context_;
  ctx.guest = this;
  ctx.request = &request;
  ctx.result = &result;
  if (request.kind == RunRequest::Kind::execute) ctx.code = std::string(strip_fence(request.code));
  for (const Snippet& snippet : setup_.snippets) {
    ctx.snippet_files.push_back("(snippet:" + snippet.name + ")");
  }
  mrb_bool failed = FALSE;
  mrb_value exc = mrb_protect_error(mrb, run_protected, &ctx, &failed);
  if (!ctx.compile_error.empty()) {
    result.code = static_cast<std::uint8_t>(FailureCode::compile_error);
    result.message = ctx.compile_error;
  } else if (failed || mrb->exc) {
    if (!failed) exc = mrb_obj_value(mrb->exc);
    mrb->exc = nullptr;
    describe_exception(mrb, exc, result);
  } else if (!ctx.done) {
    result.value = std::move(ctx.value_json);
  }
  mrb->exc = nullptr;
  context_.reset();
}

GuestResult Guest::run(const GuestRequest& request) {
  GuestResult result;
  kept_[0] = kept_[1] = 0;
  truncated_[0] = truncated_[1] = false;
  stop_code_ = kNoFailure;
  stop_message_.clear();
  std::string error;
  used_.reset();
  if (!next_ && !open(next_, error)) {
    result.code = static_cast<std::uint8_t>(
        error.rfind("tool path", 0) == 0 ? FailureCode::invalid_request : FailureCode::internal);
    result.message = error;
    return result;
  }
  std::unique_ptr<State> state = std::move(next_);
  state->heap.baseline = state->heap.live;
  state->heap.limit = setup_.memory_limit;
  state->heap.armed = true;
  running_ = state.get();
  if (setjmp(stop_jump_) == 0) {
    run_body(*state, request, result);
  } else {
    // Stopped mid-run: the state is abandoned, not closed, since mruby
    // was interrupted at an arbitrary point of its own bookkeeping.
    running_ = nullptr;
    state->heap.armed = false;
    GuestResult stopped;
    stopped.code = stop_code_;
    stopped.message = stop_message_;
    stopped.discard = true;
    // Kept reachable (a helper exits right after; an inline engine's
    // process is retired by its owner's memory bound).
    static std::vector<std::unique_ptr<State>>* abandoned =
        new std::vector<std::unique_ptr<State>>();
    abandoned->push_back(std::move(state));
    return stopped;
  }
  state->heap.armed = false;
  running_ = nullptr;
  // Closed by the next prepare(), after the result has been sent.
  used_ = std::move(state);
  return result;
}

}  // namespace corral::sandbox::ruby
