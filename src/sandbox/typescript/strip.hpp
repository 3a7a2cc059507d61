// src/sandbox/typescript/strip.hpp: TypeScript in, JavaScript out, by
// erasing the types where they stand.
//
// `strip_types` reads TypeScript (a script, a function body with top-level
// `return`/`await`, or one expression: every shape `execute` takes) and
// blanks every piece of type syntax: each erased character becomes one
// space per UTF-16 unit and line terminators stay, so every line and column
// V8 reports (syntax errors, stack traces) points at the author's own text.
// Only these characters may be written where types were, never elsewhere:
//   - `;` at the first character of a statement or class member that was
//     erased whole (`type X = 1`, an overload, an index signature), so the
//     lines around it cannot join;
//   - `;` at the end of an erased class-field annotation with no initializer
//     (`x: number` before a line that starts with `[`), and after `as T` /
//     `satisfies T` when the next line starts with `(`, `[` or a template;
//   - `)` moved to the end of an arrow function's return type that spans
//     lines, because no line may end between `)` and `=>`;
//   - `(` moved up to the `<` of an async arrow's type parameters when a
//     line ends before the `(`, because none may end between `async` and
//     `(` either.
//
// What only erases: annotations, `interface`, `type`, generics on
// declarations and calls, `as`, `satisfies`, `x!`, `?` on parameters and
// members, `this` parameters, `declare` (statements and fields),
// `import type`/`export type` and inline `type` specifiers, `abstract`,
// `public`/`private`/`protected`/`readonly`/`override`, `implements`,
// overload signatures, index signatures, `<T>x` assertions, type-only
// namespaces. What has no erasable form is refused (Status::refused, with
// the construct and where): `enum`, `namespace`/`module` holding values,
// constructor parameter properties, decorators, `import x = ...`,
// `export =`.
//
// Source this reader cannot follow (it is not JavaScript or TypeScript, or
// is nested past kMaxDepth) comes back unchanged (Status::unchanged): V8
// then reports its own syntax error at the author's line. Plain JavaScript
// comes back as it was, byte for byte, except where TypeScript itself reads
// it differently: `<` ... `>` that parses as types and is followed by `(`, a
// template or a line break is type arguments in TypeScript (`f < a > (b)` is
// a call, ``f < a > `t` `` a tagged template), comparisons in JavaScript.
// (Before `/` or `/=` JavaScript's reading, a regular expression, is kept.)
//
// Example:
//   StripResult r = strip_types("const n: number = f<string>(x as any)!;");
//   // r.status == StripResult::Status::stripped
//   // r.code   == "const n         = f        (x       ) ;"
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace corral::sandbox::typescript {

// The reader's recursion (about three steps per level of brackets) stops at
// kMaxDepth steps or kMaxStackBytes of stack, whichever comes first: deeper
// source comes back unchanged. 192 KiB leaves a 512 KiB thread (an
// embedder's, say) room for its caller; optimised, that is about 150 levels
// of brackets (corral's JSON parsers stop at 160).
// AddressSanitizer's frames are several times larger: its builds get four
// times the stack (and their threads are expected to have it).
#if defined(__SANITIZE_ADDRESS__)
#define CORRAL_STRIP_STACK_SCALE 4
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CORRAL_STRIP_STACK_SCALE 4
#endif
#endif
#ifndef CORRAL_STRIP_STACK_SCALE
#define CORRAL_STRIP_STACK_SCALE 1
#endif
inline constexpr int kMaxDepth = 1000;
inline constexpr std::uintptr_t kMaxStackBytes = 192 * 1024 * CORRAL_STRIP_STACK_SCALE;
// Tokens the reader may scan (lookahead and re-reading included) per byte
// of source; past it the source comes back unchanged. Real code needs a few;
// the bound keeps any input linear in its length.
inline constexpr std::uint64_t kWorkPerByte = 32;

struct StripResult {
  enum class Status {
    stripped,   // `code` is JavaScript (the source itself when it had no types)
    unchanged,  // not read as TypeScript: `code` is the source, `reason` says where it stopped
    refused,    // syntax with no erasable form: `reason` names it
  };
  Status status = Status::stripped;
  std::string code;
  // refused: "enum is TypeScript that ...: use ..." (the construct first);
  // unchanged: why reading stopped.
  std::string reason;
  std::size_t line = 0;    // 1-based, where `reason` points (0 when stripped)
  std::size_t column = 0;  // 1-based, in UTF-16 units as V8 counts
};

StripResult strip_types(std::string_view source);

}  // namespace corral::sandbox::typescript
