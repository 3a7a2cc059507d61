// What every mrb_state of a Guest is built from (setup_state): mruby's core
// and an explicit gem list, the output prelude ($stdout, Kernel#puts, ...),
// the Ruby 3.1 core methods (core_prelude.hpp), the hermetic clock and
// random stream, the bound tools as module methods, and the guard that
// keeps Class#allocate off classes whose instances it cannot make.
#include <mruby.h>
#include <mruby/array.h>
#include <mruby/class.h>
#include <mruby/compile.h>
#include <mruby/dump.h>
#include <mruby/hash.h>
#include <mruby/irep.h>
#include <mruby/proc.h>
#include <mruby/variable.h>

#include <algorithm>
#include <atomic>
#include <iterator>

#include "sandbox/ruby/core_prelude.hpp"
#include "sandbox/ruby/guest_internal.hpp"

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

// The gems in dependency order (eval under permissive only), finalised in
// reverse when the state closes.
void init_gems(mrb_state* mrb, Profile profile, int ai) {
  for (const Gem& gem : kGems) {
    gem.init(mrb);
    mrb_gc_arena_restore(mrb, ai);
  }
  if (profile == Profile::permissive) kEvalGem.init(mrb);
  mrb_state_atexit(mrb, final_gems);
}

// The module a tool path's constants name, made where missing; nullptr
// (ctx.error says why) when one of them is a constant no tool path made.
RClass* tool_module(mrb_state* mrb, SetupContext& ctx, const std::string& path,
                    const std::vector<std::string>& constants) {
  RClass* outer = mrb->object_class;
  for (const std::string& name : constants) {
    const mrb_sym sym = mrb_intern(mrb, name.data(), name.size());
    mrb_value outer_value = mrb_obj_value(outer);
    if (mrb_const_defined_at(mrb, outer_value, sym)) {
      mrb_value existing = mrb_const_get(mrb, outer_value, sym);
      const bool ours = std::find(ctx.created.begin(), ctx.created.end(), mrb_obj_ptr(existing)) !=
                        ctx.created.end();
      if (!ours || mrb_type(existing) != MRB_TT_MODULE) {
        *ctx.error = "tool path " + path + " would shadow the Ruby constant " + name;
        return nullptr;
      }
      outer = mrb_class_ptr(existing);
    } else {
      outer = mrb_define_module_under_id(mrb, outer, sym);
      ctx.created.push_back(reinterpret_cast<RObject*>(outer));
      mrb_define_singleton_method(mrb, reinterpret_cast<RObject*>(outer), "method_missing",
                                  missing_tool_method, MRB_ARGS_ANY());
    }
  }
  return outer;
}

// The module's tool table maps the method's name to the tool's index: one
// C function (tool_method) serves every tool.
void define_tool_method(mrb_state* mrb, RClass* outer, const std::string& method,
                        std::size_t index) {
  mrb_value module = mrb_obj_value(outer);
  const mrb_sym tools_sym = mrb_intern_cstr(mrb, kToolsIvar);
  mrb_value table = mrb_iv_get(mrb, module, tools_sym);
  if (!mrb_hash_p(table)) {
    table = mrb_hash_new(mrb);
    mrb_iv_set(mrb, module, tools_sym, table);
  }
  const mrb_sym method_sym = mrb_intern(mrb, method.data(), method.size());
  mrb_hash_set(mrb, table, mrb_symbol_value(method_sym),
               mrb_int_value(mrb, static_cast<mrb_int>(index)));
  mrb_define_singleton_method_id(mrb, reinterpret_cast<RObject*>(outer), method_sym, tool_method,
                                 MRB_ARGS_ANY());
}

// False (ctx.error says why) for a path the guest cannot be given.
bool bind_tool(mrb_state* mrb, SetupContext& ctx, std::size_t index) {
  const std::string& path = ctx.guest->setup().tools[index];
  std::vector<std::string> constants;
  std::string method;
  if (!split_path(path, constants, method)) {
    *ctx.error = "tool path " + path + " is not Const(::Const)*.method";
    return false;
  }
  RClass* outer = tool_module(mrb, ctx, path, constants);
  if (!outer) return false;
  define_tool_method(mrb, outer, method, index);
  return true;
}

// Each prelude is compiled once per Guest, then loaded as bytecode. The
// core methods' bytecode has no debug info: it loads faster, and a
// backtrace skips their frames, so an error names the guest's line as it
// would for a method CRuby implements in C.
bool load_prelude(mrb_state* mrb, const char* source, std::size_t size, std::string& bytecode,
                  bool debug) {
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
}

bool load_preludes(mrb_state* mrb, SetupContext& ctx) {
  Guest& guest = *ctx.guest;
  if (!load_prelude(mrb, kPrelude, sizeof kPrelude - 1, guest.prelude_bytecode(0), true)) {
    *ctx.error = "the Ruby prelude failed";
    return false;
  }
  if (!load_prelude(mrb, kCorePrelude, sizeof kCorePrelude - 1, guest.prelude_bytecode(1), false)) {
    *ctx.error = "the core methods prelude failed";
    return false;
  }
  if (guest.setup().profile == Profile::hermetic &&
      !load_prelude(mrb, kHermeticPrelude, sizeof kHermeticPrelude - 1, guest.prelude_bytecode(2),
                    true)) {
    *ctx.error = "the hermetic prelude failed";
    return false;
  }
  return true;
}

}  // namespace

mrb_value setup_state(mrb_state* mrb, void* data) {
  auto& ctx = *static_cast<SetupContext*>(data);
  const GuestSetup& setup = ctx.guest->setup();
  int ai = mrb_gc_arena_save(mrb);
  init_gems(mrb, setup.profile, ai);
  mrb_define_method(mrb, mrb->kernel_module, "__corral_write__", write_method, MRB_ARGS_REQ(2));
  guard_allocators(mrb);
  for (std::size_t i = 0; i < setup.tools.size(); ++i) {
    if (!bind_tool(mrb, ctx, i)) return mrb_nil_value();
    mrb_gc_arena_restore(mrb, ai);
  }
  if (!load_preludes(mrb, ctx)) return mrb_nil_value();
  mrb_gc_arena_restore(mrb, ai);
  return mrb_nil_value();
}

}  // namespace corral::sandbox::ruby
