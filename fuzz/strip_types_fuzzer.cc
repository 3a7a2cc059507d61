// fuzz/strip_types_fuzzer.cc: the TypeScript stripper
// (sandbox/typescript/strip.hpp) on any text a guest can send.
//
// Invariants:
//   - no crash, no unbounded recursion (kMaxDepth), no hang;
//   - what it strips keeps every line and every line's length in UTF-16
//     units, and writes only spaces, `;`, `)` and `(`;
//   - stripping is idempotent: its output is JavaScript, and JavaScript it
//     reads again comes back byte for byte;
//   - plain JavaScript is never changed: when V8 compiles the input as a
//     script, the output is the input, except for TypeScript's one different
//     reading, `f<T>(x)` (erasures that begin with `<`).
#include <v8.h>

#include <vector>

#include "fuzz_util.hpp"
#include "sandbox/typescript/lexer.hpp"
#include "sandbox/typescript/strip.hpp"
#include "sandbox/v8/platform.hpp"

namespace {

using corral::fuzz::fail;
using corral::sandbox::typescript::line_terminator_at;
using corral::sandbox::typescript::strip_types;
using corral::sandbox::typescript::StripResult;

// Each line's length in UTF-16 units (a 4-byte UTF-8 character is two; an
// invalid byte one, as V8 decodes it to U+FFFD).
std::vector<std::size_t> line_lengths(std::string_view s) {
  std::vector<std::size_t> lengths{0};
  std::size_t i = 0;
  while (i < s.size()) {
    if (const std::uint32_t lt = line_terminator_at(s, static_cast<std::uint32_t>(i))) {
      lengths.push_back(0);
      i += lt;
      continue;
    }
    const corral::core::Utf8Step step = corral::core::utf8_step(s, i);
    lengths.back() += step.valid && step.length == 4 ? 2 : 1;
    i += step.length;
  }
  return lengths;
}

// The bytes of the white space or line terminator JavaScript reads at
// `s[i]` (ECMA-262 WhiteSpace and LineTerminator, U+2028 and NBSP included),
// or 0. Written out here rather than taken from the lexer, so the oracle does
// not share the stripper's reading.
std::size_t space_at(std::string_view s, std::size_t i) {
  static constexpr std::string_view kSpaces[] = {
      " ",      "\t",     "\n",     "\r",     "\v",     "\f",     "\u00a0", "\u1680", "\u2000",
      "\u2001", "\u2002", "\u2003", "\u2004", "\u2005", "\u2006", "\u2007", "\u2008", "\u2009",
      "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff"};
  for (const std::string_view space : kSpaces) {
    if (s.substr(i, space.size()) == space) return space.size();
  }
  return 0;
}

// One isolate and context for the whole run: compiling only, never running.
struct Compiler {
  Compiler() {
    corral::sandbox::v8engine::ensure_v8();
    v8::Isolate::CreateParams params;
    params.array_buffer_allocator = v8::ArrayBuffer::Allocator::NewDefaultAllocator();
    isolate = v8::Isolate::New(params);
    v8::Isolate::Scope isolate_scope(isolate);
    v8::HandleScope handles(isolate);
    context.Reset(isolate, v8::Context::New(isolate));
  }
  bool compiles(std::string_view code) {
    v8::Isolate::Scope isolate_scope(isolate);
    v8::HandleScope handles(isolate);
    v8::Local<v8::Context> local = context.Get(isolate);
    v8::Context::Scope context_scope(local);
    v8::TryCatch try_catch(isolate);
    v8::Local<v8::String> text;
    if (!v8::String::NewFromUtf8(isolate, code.data(), v8::NewStringType::kNormal,
                                 static_cast<int>(code.size()))
             .ToLocal(&text)) {
      return false;
    }
    v8::ScriptCompiler::Source source(text);
    v8::Local<v8::Script> script;
    return v8::ScriptCompiler::Compile(local, &source, v8::ScriptCompiler::kNoCompileOptions)
        .ToLocal(&script);
  }
  v8::Isolate* isolate;
  v8::Global<v8::Context> context;
};

}  // namespace

// V8 keeps its heap pages' bookkeeping where LeakSanitizer cannot see it
// (memory it maps itself), so its allocations would read as leaks at exit.
// Only V8's own library is excused; the stripper is held to leaks as usual.
extern "C" const char* __lsan_default_suppressions() { return "leak:libnode.so\n"; }

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Compiler compiler;
  const std::string_view source = corral::fuzz::text_of(data, size);
  const StripResult result = strip_types(source);
  if (result.status != StripResult::Status::stripped) {
    if (result.code != source && result.status == StripResult::Status::unchanged) {
      fail("unchanged source was changed", source);
    }
    return 0;
  }
  const std::string& out = result.code;
  if (line_lengths(out) != line_lengths(source)) fail("lines or columns moved", source);
  // Sizes differ only where a multi-byte character was erased.
  if (out.size() == source.size()) {
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (out[i] != source[i] && out[i] != ' ' && out[i] != ';' && out[i] != ')' && out[i] != '(') {
        fail("wrote something other than a space, ';', ')' or '('", source);
      }
    }
  }
  const StripResult again = strip_types(out);
  if (again.status != StripResult::Status::stripped || again.code != out) {
    fail("stripping its own output changed it (not idempotent)", source);
  }
  if (out != source && out.size() == source.size() && size < 4096 && compiler.compiles(source)) {
    // Valid JavaScript: every change must be type arguments TypeScript reads
    // where JavaScript reads comparisons. Within each stretch of changed
    // characters and whitespace, the first changed one is `<`.
    bool in_stretch = false;
    bool first_seen = false;
    for (std::size_t i = 0; i < source.size();) {
      const bool changed = out[i] != source[i];
      const std::size_t space = changed ? 0 : space_at(source, i);
      if (!changed && space == 0) {
        in_stretch = false;
        ++i;
        continue;
      }
      if (!in_stretch) {
        in_stretch = true;
        first_seen = false;
      }
      if (changed && !first_seen) {
        first_seen = true;
        if (source[i] != '<') fail("plain JavaScript was changed", source);
      }
      i += changed ? 1 : space;
    }
  }
  return 0;
}
