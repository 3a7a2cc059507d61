// src/sandbox/typescript/lexer.hpp: the tokens of JavaScript and TypeScript
// source, scanned on demand from a byte position.
//
// The lexer keeps no state: `scan(pos)` returns the token that starts at or
// after `pos` (skipping whitespace and comments). The parser keeps its place
// as a Token, so saving and restoring a position (speculative parsing) is a
// copy. What depends on the grammar is the parser's to ask for: a `/` is a
// punctuator until the parser, expecting an expression, rescans it as a
// regular expression; a `}` ending a template substitution is rescanned as
// the template's continuation. `>` is always one token, never `>>` or `>=`,
// so `Map<string, Set<number>>` closes twice; the parser joins adjacent `>`
// and `=` where an expression wants an operator (as TypeScript's scanner
// does with its rescans).
//
// Example:
//   Lexer lexer("let x: number = 1");
//   Token t = lexer.scan(0);  // name "let"
//   t = lexer.scan(t.end);    // name "x"
//   t = lexer.scan(t.end);    // punct ":"
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace corral::sandbox::typescript {

enum class Tok : std::uint8_t {
  eof,
  name,             // identifiers and keywords alike: `x`, `let`, `typeof`
  private_name,     // `#x`
  number,           // `1`, `0x1F`, `1_000n`, `.5e3`
  string,           // '...' or "..."
  template_full,    // `...` without substitutions
  template_head,    // `...${
  template_middle,  // }...${
  template_tail,    // }...`
  regex,            // only from rescan_regex
  punct,            // everything else: `(`, `=>`, `?.`, `...`
};

// Up to the first 8 bytes of `text`, little-endian: a token's spelling is
// compared as one integer (the parser asks "is this `=>`?" for every token).
constexpr std::uint64_t pack8(std::string_view text) {
  std::uint64_t word = 0;
  for (std::size_t i = 0; i < text.size() && i < 8; ++i) {
    word |= std::uint64_t{static_cast<unsigned char>(text[i])} << (8 * i);
  }
  return word;
}

// A spelling known at compile time, packed: the parser compares tokens with
// dozens of these a statement. The consteval constructor makes sure none is
// packed at run time (in a function as large as the statement dispatcher,
// the compiler left 47 pack8 calls unfolded), and 16 bytes are passed in
// registers (24 went through the stack, which unoptimised sanitizer builds
// give a slot of its own at every one of hundreds of comparisons).
class Spelling {
 public:
  template <std::size_t N>
  consteval Spelling(const char (&text)[N])  // NOLINT: literals convert implicitly
      : head_(pack8(std::string_view(text, N - 1))),
        tail_(pack8(std::string_view(text, N - 1).substr(N - 1 < 8 ? N - 1 : 8)) |
              std::uint64_t{N - 1} << 56) {
    static_assert(N - 1 <= 15, "a spelling's tail and length share one word");
  }
  std::size_t size() const { return static_cast<std::size_t>(tail_ >> 56); }
  // pack8 of its first 8 bytes, and of the bytes after those (up to 7).
  std::uint64_t head() const { return head_; }
  std::uint64_t tail() const { return tail_ & ((std::uint64_t{1} << 56) - 1); }

 private:
  std::uint64_t head_;
  std::uint64_t tail_;  // bytes 8..14, and the length in the top byte
};

struct Token {
  Tok kind = Tok::eof;
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  bool newline_before = false;  // a line terminator between the previous token and this one
  std::uint64_t word = 0;       // pack8 of its text

  // Whether the token's text (in `source`) is `spelling`.
  [[gnu::always_inline]] bool spells(Spelling spelling, std::string_view source) const {
    if (end - begin != spelling.size() || word != spelling.head()) return false;
    return end - begin <= 8 || pack8(source.substr(begin + 8, end - begin - 8)) == spelling.tail();
  }
};

// LexError: the source cannot be tokenized here (an unterminated string,
// comment, template or regular expression, or a character no token starts
// with). `at` is the byte where the token began.
struct LexError {
  std::uint32_t at;
};

class Lexer {
 public:
  // `source` must outlive the lexer and be shorter than 4 GiB.
  explicit Lexer(std::string_view source) : source_(source) {}

  // The token that starts at or after `pos`, into `token` (every field set;
  // `pos` may be `token.end`). Throws LexError. Filling the caller's token
  // in place, rather than returning one, spares the parser a 24-byte copy
  // through memory per token, read back before its bytes have landed.
  void scan(std::uint32_t pos, Token& token) const;
  Token scan(std::uint32_t pos) const {
    Token token;
    scan(pos, token);
    return token;
  }
  // The regular expression literal that starts at `begin` (a `/`).
  Token rescan_regex(const Token& slash) const;
  // The template continuation that starts at `brace` (a `}` closing `${`).
  Token rescan_template(const Token& brace) const;

  std::string_view text(const Token& token) const {
    return source_.substr(token.begin, token.end - token.begin);
  }
  std::string_view source() const { return source_; }

 private:
  // Skips whitespace and comments from `pos`; sets `newline` if a line
  // terminator was crossed.
  std::uint32_t skip_trivia(std::uint32_t pos, bool& newline) const;
  std::uint32_t scan_name_tail(std::uint32_t pos) const;
  std::uint32_t scan_number(std::uint32_t pos) const;
  std::uint32_t scan_string(std::uint32_t pos) const;
  // Scans template characters after a backtick or `}`; returns the end and
  // whether a `${` (rather than a backtick) ended it.
  std::uint32_t scan_template_chars(std::uint32_t pos, bool& substitution) const;
  std::uint32_t scan_punct(std::uint32_t pos) const;

  std::string_view source_;
};

// The byte length of the line terminator at `pos` (\n, \r\n, \r, U+2028,
// U+2029), or 0.
std::uint32_t line_terminator_at(std::string_view source, std::uint32_t pos) noexcept;

}  // namespace corral::sandbox::typescript
