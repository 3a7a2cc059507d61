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

#include "sandbox/typescript/spelling.hpp"

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

struct Token {
  Tok kind = Tok::eof;
  std::uint8_t id = 0;          // its spelling's id in kKnownSpellings, or 0
  bool newline_before = false;  // a line terminator between the previous token and this one
  std::uint32_t begin = 0;
  std::uint32_t end = 0;

  // Whether the token is `spelling`.
  [[gnu::always_inline]] bool spells(Spelling spelling) const { return id == spelling.id(); }
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
  // in place, rather than returning one, spares the parser a copy through
  // memory per token, read back before its bytes have landed.
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

  std::string_view source_;
};

// The byte length of the line terminator at `pos` (\n, \r\n, \r, U+2028,
// U+2029), or 0.
std::uint32_t line_terminator_at(std::string_view source, std::uint32_t pos) noexcept;

}  // namespace corral::sandbox::typescript
