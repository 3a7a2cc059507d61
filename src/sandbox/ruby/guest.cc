#include "sandbox/ruby/guest.hpp"

#include <malloc.h>
#include <mruby.h>
#include <mruby/array.h>
#include <mruby/class.h>
#include <mruby/compile.h>
#include <mruby/dump.h>
#include <mruby/error.h>
#include <mruby/gc.h>
#include <mruby/hash.h>
#include <mruby/irep.h>
#include <mruby/proc.h>
#include <mruby/string.h>
#include <mruby/variable.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "core/utf8.hpp"
#include "sandbox/ruby/core_prelude.hpp"
#include "sandbox/ruby/values.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

// Each gem's generated init/final functions in Debian's libmruby.a; calling
// them one by one is how a state gets exactly the gems listed below.
extern "C" {
#define CORRAL_MRUBY_GEM(name)                                    \
  void GENERATED_TMP_mrb_mruby_##name##_gem_init(mrb_state* mrb); \
  void GENERATED_TMP_mrb_mruby_##name##_gem_final(mrb_state* mrb);
CORRAL_MRUBY_GEM(compar_ext)
CORRAL_MRUBY_GEM(enum_ext)
CORRAL_MRUBY_GEM(string_ext)
CORRAL_MRUBY_GEM(numeric_ext)
CORRAL_MRUBY_GEM(array_ext)
CORRAL_MRUBY_GEM(hash_ext)
CORRAL_MRUBY_GEM(range_ext)
CORRAL_MRUBY_GEM(proc_ext)
CORRAL_MRUBY_GEM(symbol_ext)
CORRAL_MRUBY_GEM(object_ext)
CORRAL_MRUBY_GEM(fiber)
CORRAL_MRUBY_GEM(enumerator)
CORRAL_MRUBY_GEM(enum_lazy)
CORRAL_MRUBY_GEM(toplevel_ext)
CORRAL_MRUBY_GEM(kernel_ext)
CORRAL_MRUBY_GEM(class_ext)
CORRAL_MRUBY_GEM(pack)
CORRAL_MRUBY_GEM(sprintf)
CORRAL_MRUBY_GEM(time)
CORRAL_MRUBY_GEM(struct)
CORRAL_MRUBY_GEM(random)
CORRAL_MRUBY_GEM(math)
CORRAL_MRUBY_GEM(complex)
CORRAL_MRUBY_GEM(rational)
CORRAL_MRUBY_GEM(metaprog)
CORRAL_MRUBY_GEM(method)
CORRAL_MRUBY_GEM(eval)
#undef CORRAL_MRUBY_GEM
}

namespace corral::sandbox::ruby {
namespace {

using GemFn = void (*)(mrb_state*);
struct Gem {
  GemFn init;
  GemFn final;
};

#define CORRAL_GEM(name) \
  Gem { &GENERATED_TMP_mrb_mruby_##name##_gem_init, &GENERATED_TMP_mrb_mruby_##name##_gem_final }
// In the dependency order of Debian's mrb_init_mrbgems, without io, socket,
// objectspace (it walks every live object, the host's included) and print
// (corral's own output replaces it). eval is added for permissive only.
const Gem kGems[] = {
    CORRAL_GEM(compar_ext),  CORRAL_GEM(enum_ext),     CORRAL_GEM(string_ext),
    CORRAL_GEM(numeric_ext), CORRAL_GEM(array_ext),    CORRAL_GEM(hash_ext),
    CORRAL_GEM(range_ext),   CORRAL_GEM(proc_ext),     CORRAL_GEM(symbol_ext),
    CORRAL_GEM(object_ext),  CORRAL_GEM(fiber),        CORRAL_GEM(enumerator),
    CORRAL_GEM(enum_lazy),   CORRAL_GEM(toplevel_ext), CORRAL_GEM(kernel_ext),
    CORRAL_GEM(class_ext),   CORRAL_GEM(pack),         CORRAL_GEM(sprintf),
    CORRAL_GEM(time),        CORRAL_GEM(struct),       CORRAL_GEM(random),
    CORRAL_GEM(math),        CORRAL_GEM(complex),      CORRAL_GEM(rational),
    CORRAL_GEM(metaprog),    CORRAL_GEM(method),
};
const Gem kEvalGem = CORRAL_GEM(eval);
#undef CORRAL_GEM

void final_gems(mrb_state* mrb) {
  if (static_cast<Guest*>(mrb->ud)->setup().profile == Profile::permissive) kEvalGem.final(mrb);
  for (auto it = std::rbegin(kGems); it != std::rend(kGems); ++it) it->final(mrb);
}

// Output, Kernel#puts/print/p/warn, $stdout/$stderr: all through one
// primitive so that the caps apply to everything.
constexpr char kPrelude[] = R"RUBY(
module Corral
  class ServiceError < StandardError; end
  class NoServiceError < ServiceError; end
  class ServiceArgumentError < ServiceError; end
  class Output
    def initialize(channel)
      @channel = channel
    end
    def write(*args)
      n = 0
      args.each { |a| s = a.to_s; __corral_write__(@channel, s); n += s.bytesize }
      n
    end
    def print(*args)
      args.each { |a| __corral_write__(@channel, a.to_s) }
      nil
    end
    def <<(obj)
      __corral_write__(@channel, obj.to_s)
      self
    end
    def puts(*args)
      __corral_write__(@channel, Corral.puts_text(args))
      nil
    end
    def flush; self; end
    def sync; true; end
    def sync=(v); v; end
    def tty?; false; end
    def isatty; false; end
  end
  def self.puts_text(args)
    return "\n" if args.empty?
    out = ""
    args.each do |a|
      items = a.is_a?(Array) ? a.flatten : [a]
      out << "\n" if items.empty?
      items.each do |i|
        s = i.nil? ? "" : i.to_s
        out << s
        out << "\n" unless s.end_with?("\n")
      end
    end
    out
  end
end
$stdout = Corral::Output.new(0)
$stderr = Corral::Output.new(1)
STDOUT = $stdout
STDERR = $stderr
module Kernel
  def puts(*args); $stdout.puts(*args); end
  def print(*args); $stdout.print(*args); end
  def p(*args)
    args.each { |a| $stdout.write(a.inspect + "\n") }
    args.size <= 1 ? args.first : args
  end
  def warn(*args)
    $stderr.puts(*args) unless args.empty?
    nil
  end
end
)RUBY";

// Hermetic: the clock stands at the epoch, randomness is a fixed stream.
constexpr char kHermeticPrelude[] = R"RUBY(
class Time
  def self.now; at(0); end
  def self.new(*args); args.empty? ? at(0) : super; end
end
class Random
  def self.new(seed = 0x5EED); super(seed); end
end
Random.srand(0x5EED)
srand(0x5EED)
)RUBY";

constexpr char kCodeIvar[] = "__corral_code";
constexpr char kToolsIvar[] = "__corral_tools";

Guest* guest_of(mrb_state* mrb) { return static_cast<Guest*>(mrb->ud); }

[[noreturn]] void raise_coded(mrb_state* mrb, const char* class_name, FailureCode code,
                              mrb_value message) {
  RClass* corral = mrb_module_get(mrb, "Corral");
  RClass* cls = mrb_class_get_under(mrb, corral, class_name);
  mrb_value exc = mrb_exc_new_str(mrb, cls, message);
  mrb_iv_set(mrb, exc, mrb_intern_cstr(mrb, kCodeIvar), mrb_int_value(mrb, static_cast<int>(code)));
  mrb_exc_raise(mrb, exc);
  __builtin_unreachable();  // mrb_noreturn is empty in strict C++
}

mrb_value ruby_string(mrb_state* mrb, const std::string& text) {
  return mrb_str_new(mrb, text.data(), text.size());
}

std::string bound_tools(const Guest& guest) {
  std::string list;
  for (const std::string& path : guest.setup().tools) list += (list.empty() ? "" : ", ") + path;
  return list;
}

mrb_value write_method(mrb_state* mrb, mrb_value self) {
  mrb_int channel = 0;
  mrb_value text;
  mrb_get_args(mrb, "iS", &channel, &text);
  guest_of(mrb)->write(channel == 1 ? 1 : 0, RSTRING_PTR(text),
                       static_cast<std::size_t>(RSTRING_LEN(text)));
  return mrb_nil_value();
}

mrb_value missing_tool_method(mrb_state* mrb, mrb_value self) {
  mrb_sym name = 0;
  const mrb_value* argv = nullptr;
  mrb_int argc = 0;
  mrb_get_args(mrb, "n*", &name, &argv, &argc);
  mrb_value message;
  {
    const char* module = mrb_class_name(mrb, mrb_class_ptr(self));
    mrb_int len = 0;
    const char* method = mrb_sym_name_len(mrb, name, &len);
    std::string text = "no tool named " + std::string(module ? module : "?") + "." +
                       std::string(method, static_cast<std::size_t>(len)) +
                       " is bound (bound tools: " + bound_tools(*guest_of(mrb)) + ")";
    message = ruby_string(mrb, text);
  }
  raise_coded(mrb, "NoServiceError", FailureCode::no_such_tool, message);
}

enum class CallStatus { ok, argument, tool_error, stop };

// The C++ half of a tool call: every C++ object it makes dies before the
// caller raises into mruby.
CallStatus call_tool(mrb_state* mrb, Guest& guest, std::uint32_t index, const mrb_value* argv,
                     mrb_int argc, mrb_value& result, std::uint8_t& stop_code) {
  const std::string& path = guest.setup().tools[index];
  if (argc > 1) {
    result = ruby_string(
        mrb, path + " takes one argument (a JSON value, or keywords), not " + std::to_string(argc));
    return CallStatus::argument;
  }
  std::string args = "null";
  if (argc == 1) {
    args.clear();
    std::string why;
    if (!to_json(mrb, argv[0], args, why, "argument")) {
      result = ruby_string(mrb, "the argument of " + path + " has no JSON form: " + why);
      return CallStatus::argument;
    }
  }
  std::string out;
  switch (guest.host().call_tool(index, std::move(args), out, stop_code)) {
    case GuestHost::Answer::ok:
      if (!from_json(mrb, out, result)) {
        result = ruby_string(mrb, path + " returned invalid JSON");
        return CallStatus::tool_error;
      }
      return CallStatus::ok;
    case GuestHost::Answer::error:
      result = ruby_string(mrb, out);
      return CallStatus::tool_error;
    case GuestHost::Answer::stop:
      return CallStatus::stop;
  }
  return CallStatus::stop;
}

mrb_value tool_method(mrb_state* mrb, mrb_value self) {
  const mrb_value* argv = nullptr;
  mrb_int argc = 0;
  mrb_value block;
  mrb_get_args(mrb, "*&", &argv, &argc, &block);
  Guest& guest = *guest_of(mrb);
  const mrb_sym mid = mrb_get_mid(mrb);
  mrb_value table = mrb_iv_get(mrb, self, mrb_intern_cstr(mrb, kToolsIvar));
  mrb_value index =
      mrb_hash_p(table) ? mrb_hash_get(mrb, table, mrb_symbol_value(mid)) : mrb_nil_value();
  if (!mrb_integer_p(index) || mrb_integer(index) < 0 ||
      static_cast<std::size_t>(mrb_integer(index)) >= guest.setup().tools.size()) {
    raise_coded(mrb, "NoServiceError", FailureCode::no_such_tool,
                mrb_str_new_lit(mrb, "this method is not a bound tool"));
  }
  Counters& counters = guest.counters();
  const std::uint64_t max = guest.setup().max_tool_calls;
  if (max != kNone && counters.tool_calls.load() >= max) {
    guest.stop(static_cast<std::uint8_t>(FailureCode::tool_error),
               "the run made more tool calls than max_tool_calls allows");
  }
  counters.tool_calls.fetch_add(1);
  mrb_value result = mrb_nil_value();
  std::uint8_t stop_code = kNoFailure;
  switch (call_tool(mrb, guest, static_cast<std::uint32_t>(mrb_integer(index)), argv, argc, result,
                    stop_code)) {
    case CallStatus::ok:
      return result;
    case CallStatus::argument:
      raise_coded(mrb, "ServiceArgumentError", FailureCode::tool_argument, result);
    case CallStatus::tool_error:
      raise_coded(mrb, "ServiceError", FailureCode::tool_error, result);
    case CallStatus::stop:
      break;
  }
  guest.stop(stop_code, "");
}

// Splits "Tools::Search.query" into {"Tools", "Search"} and "query".
bool split_path(const std::string& path, std::vector<std::string>& constants, std::string& method) {
  const std::size_t dot = path.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == path.size()) return false;
  method = path.substr(dot + 1);
  std::string_view rest(path.data(), dot);
  constants.clear();
  while (true) {
    const std::size_t sep = rest.find("::");
    constants.emplace_back(rest.substr(0, sep));
    if (constants.back().empty()) return false;
    if (sep == std::string_view::npos) break;
    rest.remove_prefix(sep + 2);
  }
  return true;
}

// Core classes whose instances hold C state only their own constructors
// make: an allocate()d or Class#new'd one is a NULL dereference waiting for
// its first method call (Proc.allocate.call, Method.allocate.super_method,
// UnboundMethod.allocate.bind). Found by tests/sandbox_ruby/fuzz --sweep.
constexpr const char* kNoAllocator[] = {"Proc", "Method", "UnboundMethod"};
constexpr char kNoAllocatorIvar[] = "__corral_noalloc";  // no @: hidden from guests

// mruby's own Class#allocate, wrapped by the guard below. Atomic: inline
// engines open states on several threads (they store the same value).
std::atomic<mrb_func_t> g_class_allocate{nullptr};

// Raises TypeError when `cv` is, or inherits from, a class in kNoAllocator.
void refuse_without_allocator(mrb_state* mrb, mrb_value cv) {
  mrb_value denied =
      mrb_iv_get(mrb, mrb_obj_value(mrb->class_class), mrb_intern_cstr(mrb, kNoAllocatorIvar));
  if (!mrb_array_p(denied)) return;
  for (RClass* c = mrb_class_ptr(cv); c; c = c->super) {
    for (mrb_int i = 0; i < RARRAY_LEN(denied); ++i) {
      if (mrb_class_ptr(RARRAY_PTR(denied)[i]) == c) {
        mrb_raisef(mrb, E_TYPE_ERROR, "allocator undefined for %v", mrb_obj_value(c));
      }
    }
  }
}

mrb_value guarded_allocate(mrb_state* mrb, mrb_value cv) {
  refuse_without_allocator(mrb, cv);
  return g_class_allocate.load(std::memory_order_relaxed)(mrb, cv);
}

// Replaces Class#allocate with a guard that refuses the classes in
// kNoAllocator (and their subclasses), however it is reached: Proc.allocate,
// Class.new(Method).new (mruby's Class#new is bytecode that sends
// allocate), Class.instance_method(:allocate).bind(Proc).call. Proc.new,
// method(:x) and instance_method(:x) make theirs without it.
void guard_allocators(mrb_state* mrb) {
  const mrb_method_t m = mrb_method_search(mrb, mrb->class_class, mrb_intern_lit(mrb, "allocate"));
  const mrb_func_t original = MRB_METHOD_CFUNC_P(m) ? MRB_METHOD_CFUNC(m) : nullptr;
  if (!original) mrb_raise(mrb, E_RUNTIME_ERROR, "Class#allocate is not a C function");
  if (original != &guarded_allocate) g_class_allocate.store(original, std::memory_order_relaxed);
  mrb_define_method(mrb, mrb->class_class, "allocate", guarded_allocate, MRB_ARGS_NONE());
  mrb_value denied = mrb_ary_new(mrb);
  for (const char* name : kNoAllocator) {
    mrb_ary_push(mrb, denied, mrb_obj_value(mrb_class_get(mrb, name)));
  }
  mrb_iv_set(mrb, mrb_obj_value(mrb->class_class), mrb_intern_cstr(mrb, kNoAllocatorIvar), denied);
}

struct SetupContext {
  Guest* guest;
  std::string* error;
  std::vector<RObject*> created;  // the modules the tool paths made
};

mrb_value setup_state(mrb_state* mrb, void* data) {
  auto* ctx = static_cast<SetupContext*>(data);
  const GuestSetup& setup = ctx->guest->setup();
  int ai = mrb_gc_arena_save(mrb);
  for (const Gem& gem : kGems) {
    gem.init(mrb);
    mrb_gc_arena_restore(mrb, ai);
  }
  if (setup.profile == Profile::permissive) kEvalGem.init(mrb);
  mrb_state_atexit(mrb, final_gems);
  mrb_define_method(mrb, mrb->kernel_module, "__corral_write__", write_method, MRB_ARGS_REQ(2));
  guard_allocators(mrb);

  for (std::size_t i = 0; i < setup.tools.size(); ++i) {
    std::vector<std::string> constants;
    std::string method;
    if (!split_path(setup.tools[i], constants, method)) {
      *ctx->error = "tool path " + setup.tools[i] + " is not Const(::Const)*.method";
      return mrb_nil_value();
    }
    RClass* outer = mrb->object_class;
    for (const std::string& name : constants) {
      const mrb_sym sym = mrb_intern(mrb, name.data(), name.size());
      mrb_value outer_value = mrb_obj_value(outer);
      if (mrb_const_defined_at(mrb, outer_value, sym)) {
        mrb_value existing = mrb_const_get(mrb, outer_value, sym);
        const bool ours = std::find(ctx->created.begin(), ctx->created.end(),
                                    mrb_obj_ptr(existing)) != ctx->created.end();
        if (!ours || mrb_type(existing) != MRB_TT_MODULE) {
          *ctx->error = "tool path " + setup.tools[i] + " would shadow the Ruby constant " + name;
          return mrb_nil_value();
        }
        outer = mrb_class_ptr(existing);
      } else {
        outer = mrb_define_module_under_id(mrb, outer, sym);
        ctx->created.push_back(reinterpret_cast<RObject*>(outer));
        mrb_define_singleton_method(mrb, reinterpret_cast<RObject*>(outer), "method_missing",
                                    missing_tool_method, MRB_ARGS_ANY());
      }
    }
    mrb_value module = mrb_obj_value(outer);
    const mrb_sym tools_sym = mrb_intern_cstr(mrb, kToolsIvar);
    mrb_value table = mrb_iv_get(mrb, module, tools_sym);
    if (!mrb_hash_p(table)) {
      table = mrb_hash_new(mrb);
      mrb_iv_set(mrb, module, tools_sym, table);
    }
    const mrb_sym method_sym = mrb_intern(mrb, method.data(), method.size());
    mrb_hash_set(mrb, table, mrb_symbol_value(method_sym),
                 mrb_int_value(mrb, static_cast<mrb_int>(i)));
    mrb_define_singleton_method_id(mrb, reinterpret_cast<RObject*>(outer), method_sym, tool_method,
                                   MRB_ARGS_ANY());
    mrb_gc_arena_restore(mrb, ai);
  }

  // Each prelude is compiled once per Guest, then loaded as bytecode. The
  // core methods' bytecode has no debug info: it loads faster, and a
  // backtrace skips their frames, so an error names the guest's line as it
  // would for a method CRuby implements in C.
  auto load = [&](const char* source, std::size_t size, std::string& bytecode, bool debug) {
    if (!bytecode.empty()) {
      mrb_load_irep_buf(mrb, bytecode.data(), bytecode.size());
      return mrb->exc == nullptr;
    }
    mrbc_context* cxt = mrbc_context_new(mrb);
    mrbc_filename(mrb, cxt, "(corral)");
    cxt->capture_errors = TRUE;
    cxt->no_exec = TRUE;
    mrb_value proc = mrb_load_nstring_cxt(mrb, source, size, cxt);
    mrbc_context_free(mrb, cxt);
    if (mrb->exc || mrb_type(proc) != MRB_TT_PROC) return false;
    std::uint8_t* bin = nullptr;
    std::size_t bin_size = 0;
    if (mrb_dump_irep(mrb, mrb_proc_ptr(proc)->body.irep, debug ? MRB_DUMP_DEBUG_INFO : 0, &bin,
                      &bin_size) == MRB_DUMP_OK) {
      bytecode.assign(reinterpret_cast<const char*>(bin), bin_size);
    }
    mrb_free(mrb, bin);
    mrb_top_run(mrb, mrb_proc_ptr(proc), mrb_top_self(mrb), 0);
    return mrb->exc == nullptr;
  };
  if (!load(kPrelude, sizeof kPrelude - 1, ctx->guest->prelude_bytecode(0), true)) {
    *ctx->error = "the Ruby prelude failed";
    return mrb_nil_value();
  }
  if (!load(kCorePrelude, sizeof kCorePrelude - 1, ctx->guest->prelude_bytecode(1), false)) {
    *ctx->error = "the core methods prelude failed";
    return mrb_nil_value();
  }
  if (setup.profile == Profile::hermetic &&
      !load(kHermeticPrelude, sizeof kHermeticPrelude - 1, ctx->guest->prelude_bytecode(2), true)) {
    *ctx->error = "the hermetic prelude failed";
    return mrb_nil_value();
  }
  mrb_gc_arena_restore(mrb, ai);
  return mrb_nil_value();
}

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

// Fills `result` from an uncaught exception: a code the host attached, or
// guest_error with "FILE:LINE: message (Class)" and the backtrace.
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

}  // namespace

// What one run's protected body works on; C++ objects live here, outside
// the frames an mruby exception unwinds.
struct RunContext {
  Guest* guest;
  const GuestRequest* request;
  GuestResult* result;
  std::string code;           // the main code, fence stripped
  std::string filename;       // of the source being loaded
  std::string compile_error;  // set when a source did not parse
  std::string value_json;
  std::string why;
  std::vector<std::string> snippet_files;
  mrb_value before_constants;
  bool done = false;  // the body set result itself
};

namespace {

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

mrb_value run_protected(mrb_state* mrb, void* data) {
  auto& ctx = *static_cast<RunContext*>(data);
  const GuestSetup& setup = ctx.guest->setup();
  const GuestRequest& request = *ctx.request;
  mrb_value value = mrb_nil_value();
  ctx.before_constants = mrb_funcall_argv(mrb, mrb_obj_value(mrb->object_class),
                                          mrb_intern_lit(mrb, "constants"), 0, nullptr);
  mrb_gc_register(mrb, ctx.before_constants);
  for (std::size_t i = 0; i < setup.snippets.size(); ++i) {
    if (!load_source(mrb, ctx, setup.snippets[i].code, ctx.snippet_files[i].c_str(), value))
      return mrb_nil_value();
  }
  switch (request.kind) {
    case RunRequest::Kind::eval:
      if (!load_source(mrb, ctx, request.code, "(eval)", value)) return mrb_nil_value();
      break;
    case RunRequest::Kind::execute:
      if (!load_source(mrb, ctx, ctx.code, "(eval)", value)) return mrb_nil_value();
      if (mrb_type(value) == MRB_TT_PROC) {
        value = mrb_funcall_argv(mrb, value, mrb_intern_lit(mrb, "call"), 0, nullptr);
      }
      break;
    case RunRequest::Kind::call: {
      mrb_value args;
      if (!from_json(mrb, request.args_json, args) || !mrb_array_p(args)) {
        ctx.result->code = static_cast<std::uint8_t>(FailureCode::invalid_request);
        ctx.result->message = "run: args must be a JSON array";
        ctx.done = true;
        return mrb_nil_value();
      }
      const std::string& name = request.entrypoint;
      const mrb_sym sym = mrb_intern(mrb, name.data(), name.size());
      const bool constant = !name.empty() && name[0] >= 'A' && name[0] <= 'Z';
      mrb_value target = mrb_top_self(mrb);
      mrb_sym method = sym;
      bool found = false;
      if (constant) {
        if (mrb_const_defined_at(mrb, mrb_obj_value(mrb->object_class), sym)) {
          target = mrb_const_get(mrb, mrb_obj_value(mrb->object_class), sym);
          method = mrb_intern_lit(mrb, "call");
          found = true;
          if (!mrb_respond_to(mrb, target, method)) {
            ctx.result->code = static_cast<std::uint8_t>(FailureCode::guest_error);
            ctx.result->message = "run: " + name + " does not respond to call";
            ctx.done = true;
            return mrb_nil_value();
          }
        }
      } else {
        found = mrb_respond_to(mrb, target, sym);
      }
      if (!found) {
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
          available +=
              (available.empty() ? "" : ", ") + std::string(text, static_cast<std::size_t>(len));
        }
        ctx.result->code = static_cast<std::uint8_t>(FailureCode::invalid_request);
        ctx.result->message = "run: no entry point named " + name +
                              " (defined: " + (available.empty() ? "none" : available) + ")";
        ctx.done = true;
        return mrb_nil_value();
      }
      value = mrb_funcall_argv(mrb, target, method, RARRAY_LEN(args), RARRAY_PTR(args));
      break;
    }
  }
  if (!to_json(mrb, value, ctx.value_json, ctx.why, "value")) {
    ctx.result->code = static_cast<std::uint8_t>(FailureCode::unserializable_value);
    ctx.result->message = "the run's value has no JSON form: " + ctx.why;
    ctx.done = true;
  }
  return mrb_nil_value();
}

}  // namespace

struct Guest::Heap {
  Guest* guest = nullptr;
  std::int64_t live = 0;
  std::int64_t baseline = 0;
  std::uint64_t limit = kNone;
  bool armed = false;
  std::int64_t since_gc = 0;  // bytes allocated since pace_gc last asked for a GC
};

struct Guest::State {
  Heap heap;
  mrb_state* mrb = nullptr;
  ~State() {
    if (mrb) mrb_close(mrb);
  }
};

namespace {

// mruby paces its GC by objects made, not bytes: a loop that keeps 100 KB
// live but makes a 100 KB garbage string or array per step reached the
// limit long before a GC ran. Once a run holds a quarter of its limit,
// each further eighth of the limit it allocates asks for a GC at mruby's
// next object allocation, which is where mruby collects by design (a GC
// from inside this allocator is not safe: mruby's own collect-and-retry on
// a failed allocation crashes in fiber_init, RubyHostile.FiberGamesEndCleanly).
// Each GC asked for runs whole, not in increments, and past half the limit
// it is a major one, which also frees garbage that had lived through a GC
// (a previous step's value still held in a VM register is marked once and
// then old). What is still held at the limit is live, or the guest turned
// the GC off.
// A GC step ratio no heap within a run's limit exhausts in one increment.
constexpr int kWholeCycleSteps = 1 << 24;

void pace_gc(mrb_state* mrb, Guest::Heap& heap, std::int64_t used, std::size_t size) {
  heap.since_gc += static_cast<std::int64_t>(size);
  const auto limit = static_cast<std::int64_t>(heap.limit);
  if (used < limit / 4 || heap.since_gc < limit / 8) return;
  heap.since_gc = 0;
  mrb_gc& gc = mrb->gc;
  gc.threshold = 0;                  // mrb_obj_alloc collects when live > threshold
  gc.step_ratio = kWholeCycleSteps;  // an increment that finishes the cycle
  if (used > limit / 2) gc.majorgc_old_threshold = 0;  // the next minor GC turns major
}

// Every byte mruby holds goes through here: a run may hold memory_limit
// bytes past what its state held at entry. The allocation that would cross
// the limit stops the run at once: the state is abandoned, not unwound, so
// no `rescue` in the guest can outlive the limit.
void* counting_alloc(mrb_state* mrb, void* p, size_t size, void* ud) {
  auto* heap = static_cast<Guest::Heap*>(ud);
  if (size == 0) {
    if (p) {
      heap->live -= static_cast<std::int64_t>(malloc_usable_size(p));
      std::free(p);
    }
    return nullptr;
  }
  const auto old = static_cast<std::int64_t>(p ? malloc_usable_size(p) : 0);
  if (heap->armed && heap->limit != kNone) {
    const std::int64_t after = heap->live - old + static_cast<std::int64_t>(size);
    if (after - heap->baseline > static_cast<std::int64_t>(heap->limit)) {
      heap->guest->stop(static_cast<std::uint8_t>(FailureCode::memory_limit), "");
    }
    pace_gc(mrb, *heap, after - heap->baseline, size);
  }
  void* q = std::realloc(p, size);
  if (!q) return nullptr;
  heap->live += static_cast<std::int64_t>(malloc_usable_size(q)) - old;
  if (heap->armed) {
#if defined(__SANITIZE_ADDRESS__)
    // A stopped run's state is abandoned on purpose (see Guest::run); only
    // mruby knew where some of its blocks were.
    __lsan_ignore_object(q);
#endif
    const std::int64_t delta = heap->live - heap->baseline;
    auto& peak = heap->guest->counters().memory_peak;
    if (delta > 0 && static_cast<std::uint64_t>(delta) > peak.load(std::memory_order_relaxed)) {
      peak.store(static_cast<std::uint64_t>(delta), std::memory_order_relaxed);
    }
  }
  return q;
}

}  // namespace

Guest::Guest(GuestSetup setup, GuestHost& host, Counters& counters)
    : setup_(std::move(setup)), host_(host), counters_(counters) {}

Guest::~Guest() = default;

bool Guest::open(std::unique_ptr<State>& out, std::string& error) {
  auto state = std::make_unique<State>();
  state->heap.guest = this;
  mrb_state* mrb = mrb_open_core(counting_alloc, &state->heap);
  if (!mrb) {
    error = "mruby could not open a state";
    return false;
  }
  state->mrb = mrb;
  mrb->ud = this;
  // Nearly everything setup allocates lives as long as the state: a GC
  // during setup would only walk it.
  mrb->gc.disabled = TRUE;
  SetupContext ctx{this, &error, {}};
  mrb_bool failed = FALSE;
  mrb_value exc = mrb_protect_error(mrb, setup_state, &ctx, &failed);
  if (failed || mrb->exc) {
    if (!failed) exc = mrb_obj_value(mrb->exc);
    mrb->exc = nullptr;
    GuestResult described;
    describe_exception(mrb, exc, described);
    error = "the Ruby state could not be set up: " + described.message;
    return false;
  }
  if (!error.empty()) return false;
  mrb->gc.disabled = FALSE;
  out = std::move(state);
  return true;
}

void Guest::prepare() {
  used_.reset();
  if (next_) return;
  std::string error;
  open(next_, error);
}

void Guest::write(int channel, const char* bytes, std::size_t size) {
  const std::uint64_t limit = channel == 1 ? setup_.stderr_limit : setup_.stdout_limit;
  (channel == 1 ? counters_.offered_stderr : counters_.offered_stdout).fetch_add(size);
  if (truncated_[channel]) return;
  std::size_t keep = size;
  if (limit != kNone && kept_[channel] + size > limit) {
    keep = static_cast<std::size_t>(limit - kept_[channel]);
    keep = core::utf8_cut(std::string_view(bytes, size), keep);
    truncated_[channel] = true;
    (channel == 1 ? counters_.stderr_truncated : counters_.stdout_truncated).store(1);
  }
  kept_[channel] += keep;
  if (keep > 0) host_.write(channel, std::string_view(bytes, keep));
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
