// src/sandbox/typescript/spelling.hpp: the spellings the TypeScript reader
// compares tokens with (keywords, contextual words, punctuators), each with a
// one-byte id.
//
// The lexer gives every token the id of its spelling (0 for any other), by
// one multiplication and table lookup, so that the parser's "is this `=>`?",
// asked several times a token, is one byte compared. Compared as a length
// and 8 packed bytes instead, the length's test was a quarter of a strip's
// mispredicted branches: after V8's run a predictor has no history of the
// next token's length (BENCHMARKS.md, issue 18).
//
// A `Spelling` is made at compile time from a literal, and a literal that is
// not in kKnownSpellings does not compile. The ids are found by a perfect
// hash: the top 10 bits of the packed first 8 bytes times
// kSpellingHashMultiplier. Adding a spelling can make two collide, which
// fails the build (make_known_spellings); then search for another odd
// multiplier under which all of them land apart (a few thousand random ones
// is enough for 1,024 slots).
//
// Example:
//   constexpr Spelling arrow = "=>";
//   token.id == arrow.id();  // the token is `=>`
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace corral::sandbox::typescript {

// Up to the first 8 bytes of `text`, little-endian.
constexpr std::uint64_t pack8(std::string_view text) {
  std::uint64_t word = 0;
  for (std::size_t i = 0; i < text.size() && i < 8; ++i) {
    word |= std::uint64_t{static_cast<unsigned char>(text[i])} << (8 * i);
  }
  return word;
}

// Every punctuator the lexer makes, and the words the reader asks about.
// A spelling's id is its index + 1.
inline constexpr std::string_view kKnownSpellings[] = {
    // punctuators
    ".", "...", "=", "==", "===", "=>", "!", "!=", "!==", "*", "**", "**=", "*=", "<", "<<",
    "<<=", "<=", "&", "&&", "&&=", "&=", "|", "||", "||=", "|=", "?", "?\?", "?\?=", "?.", "+",
    "++", "+=", "-", "--", "-=", "/", "/=", "%", "%=", "^", "^=", ">", "{", "}", "(", ")", "[", "]",
    ";", ",", "~", ":", "@",
    // words
    "abstract", "accessor", "as", "assert", "asserts", "async", "await", "break", "case", "catch",
    "class", "const", "continue", "debugger", "declare", "default", "delete", "do", "else", "enum",
    "export", "extends", "finally", "for", "from", "function", "get", "global", "if", "implements",
    "import", "in", "infer", "instanceof", "interface", "is", "keyof", "let", "module", "namespace",
    "new", "of", "out", "override", "private", "protected", "public", "readonly", "return",
    "satisfies", "set", "static", "switch", "this", "throw", "try", "type", "typeof", "unique",
    "var", "void", "while", "with", "yield",
    // not asked about yet: in the table so that asking needs no new multiplier
    "constructor", "null", "true", "false", "super", "undefined", "never", "unknown", "any",
    "number", "string", "boolean", "symbol", "object", "bigint", "target", "meta", "using",
    "package"};

inline constexpr std::size_t kKnownSpellingCount = std::size(kKnownSpellings);
static_assert(kKnownSpellingCount < 256, "ids are one byte, 0 for no known spelling");

inline constexpr std::uint64_t kSpellingHashMultiplier = 0x8691bfb014bfb745;
inline constexpr int kSpellingSlotBits = 10;

constexpr std::size_t spelling_slot(std::uint64_t packed) {
  return static_cast<std::size_t>((packed * kSpellingHashMultiplier) >> (64 - kSpellingSlotBits));
}

struct KnownSpellings {
  std::array<std::uint8_t, std::size_t{1} << kSpellingSlotBits> id_by_slot{};
  // By id (0: none; its packed word 0 matches no token).
  std::array<std::uint64_t, kKnownSpellingCount + 1> packed{};
  std::array<std::uint8_t, kKnownSpellingCount + 1> size{};
};

consteval KnownSpellings make_known_spellings() {
  KnownSpellings known;
  for (std::size_t i = 0; i < kKnownSpellingCount; ++i) {
    const std::string_view text = kKnownSpellings[i];
    const auto id = static_cast<std::uint8_t>(i + 1);
    const std::size_t slot = spelling_slot(pack8(text));
    if (known.id_by_slot[slot] != 0) {
      throw "two known spellings share a slot: choose another kSpellingHashMultiplier";
    }
    if (text.size() > 15) throw "a known spelling is longer than 15 bytes";
    known.id_by_slot[slot] = id;
    known.packed[id] = pack8(text);
    known.size[id] = static_cast<std::uint8_t>(text.size());
  }
  return known;
}

inline constexpr KnownSpellings kKnown = make_known_spellings();

// The id of `text` among kKnownSpellings (0: none). `packed` is pack8(text).
// Texts longer than 8 bytes are compared past their first 8 only when those
// and the length match a known spelling.
// No branch on what the token is (the lexer asks this of every token; which
// is known is as good as random to a predictor) but one taken only by the
// rare tokens whose first 8 bytes and length are a long known spelling's.
constexpr std::uint8_t spelling_id(std::string_view text, std::uint64_t packed) {
  const std::uint8_t slot_id = kKnown.id_by_slot[spelling_slot(packed)];
  const int same = static_cast<int>(kKnown.packed[slot_id] == packed) &
                   static_cast<int>(kKnown.size[slot_id] == text.size());
  auto id = static_cast<std::uint8_t>(slot_id * same);
  if (kKnown.size[id] > 8 && text != kKnownSpellings[id - 1]) id = 0;
  return id;
}

// The id of a known spelling, at compile time: any other text does not
// compile.
consteval std::uint8_t known_spelling_id(std::string_view text) {
  const std::uint8_t id = spelling_id(text, pack8(text));
  if (id == 0) throw "not in kKnownSpellings (spelling.hpp)";
  return id;
}

// A known spelling, as its id.
class Spelling {
 public:
  template <std::size_t N>
  consteval Spelling(const char (&text)[N])  // NOLINT: literals convert implicitly
      : id_(known_spelling_id(std::string_view(text, N - 1))) {}
  constexpr std::uint8_t id() const { return id_; }

 private:
  std::uint8_t id_;
};

}  // namespace corral::sandbox::typescript
