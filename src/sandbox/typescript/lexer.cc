#include "sandbox/typescript/lexer.hpp"

#include <array>
#include <bit>
#include <cstring>

#include "core/utf8.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace corral::sandbox::typescript {
namespace {

// The code point of the valid UTF-8 character at `pos`, or -1 (ASCII is
// not asked for here; an invalid sequence is one "character" of its own).
struct Decoded {
  std::int32_t code_point;
  std::uint32_t length;
};

Decoded decode(std::string_view s, std::uint32_t pos) {
  const core::Utf8Step step = core::utf8_step(s, pos);
  if (!step.valid) return {-1, static_cast<std::uint32_t>(step.length)};
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[pos + i]); };
  std::int32_t cp = 0;
  switch (step.length) {
    case 2:
      cp = ((byte(0) & 0x1F) << 6) | (byte(1) & 0x3F);
      break;
    case 3:
      cp = ((byte(0) & 0x0F) << 12) | ((byte(1) & 0x3F) << 6) | (byte(2) & 0x3F);
      break;
    case 4:
      cp = ((byte(0) & 0x07) << 18) | ((byte(1) & 0x3F) << 12) | ((byte(2) & 0x3F) << 6) |
           (byte(3) & 0x3F);
      break;
    default:
      cp = byte(0);
  }
  return {cp, static_cast<std::uint32_t>(step.length)};
}

bool is_unicode_space(std::int32_t cp) {
  return cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000 || cp == 0xFEFF;
}

// One table lookup per byte instead of a chain of comparisons: the lexer
// runs over every byte of every TypeScript run.
enum CharClass : std::uint8_t {
  kBlank = 1,      // space, tab, vertical tab, form feed
  kNameStart = 2,  // a-z A-Z _ $ and `\` (a \u escape)
  kNamePart = 4,   // kNameStart and 0-9
  kDigit = 8,
  kTrivia = 16,         // where trivia may start: blanks, \n, \r, `/`, and bytes >= 0x80
  kPlainNamePart = 32,  // a-z A-Z 0-9 _ $: a name goes on with no escape or decoding
};

constexpr std::array<std::uint8_t, 256> make_classes() {
  std::array<std::uint8_t, 256> classes{};
  for (int c = 0; c < 256; ++c) {
    std::uint8_t k = 0;
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (c == ' ' || c == '\t' || c == '\v' || c == '\f') k |= kBlank | kTrivia;
    if (alpha || c == '_' || c == '$' || c == '\\') k |= kNameStart | kNamePart;
    if (alpha || c == '_' || c == '$' || (c >= '0' && c <= '9')) k |= kPlainNamePart;
    if (c >= '0' && c <= '9') k |= kDigit | kNamePart;
    if (c == '\n' || c == '\r' || c == '/' || c >= 0x80) k |= kTrivia;
    classes[static_cast<std::size_t>(c)] = k;
  }
  return classes;
}
constexpr std::array<std::uint8_t, 256> kClasses = make_classes();

// What a token's first byte starts (Lexer::scan's one jump).
enum class Lead : std::uint8_t {
  invalid,
  plain_name,  // a-z A-Z _ $
  other_name,  // `\` and bytes >= 0x80
  hash,
  digit,
  dot,
  quote,
  backtick,
  equals,
  bang,
  doubling,     // * < & | ?
  plus_minus,   // + -
  with_equals,  // / % ^
  single,       // > { } ( ) [ ] ; , ~ : @
};

constexpr std::array<std::uint8_t, 256> make_leads() {
  std::array<std::uint8_t, 256> leads{};
  const auto set = [&](std::string_view chars, Lead lead) {
    for (const char c : chars)
      leads[static_cast<unsigned char>(c)] = static_cast<std::uint8_t>(lead);
  };
  for (int c = 0; c < 256; ++c) {
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (alpha || c == '_' || c == '$')
      leads[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(Lead::plain_name);
    if (c >= 0x80) leads[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(Lead::other_name);
    if (c >= '0' && c <= '9')
      leads[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(Lead::digit);
  }
  set("\\", Lead::other_name);
  set("#", Lead::hash);
  set(".", Lead::dot);
  set("\"'", Lead::quote);
  set("`", Lead::backtick);
  set("=", Lead::equals);
  set("!", Lead::bang);
  set("*<&|?", Lead::doubling);
  set("+-", Lead::plus_minus);
  set("/%^", Lead::with_equals);
  set(">{}()[];,~:@", Lead::single);
  return leads;
}
constexpr std::array<std::uint8_t, 256> kLeads = make_leads();

[[gnu::always_inline]] inline bool has(char c, CharClass k) {
  return (kClasses[static_cast<unsigned char>(c)] & k) != 0;
}
bool is_ascii_name_start(char c) { return has(c, kNameStart); }
bool is_digit(char c) { return has(c, kDigit); }
bool is_ascii_name_part(char c) { return has(c, kNamePart); }

// pack8 of source[begin, end) (spelling.hpp), one load where 8 bytes are there.
std::uint64_t pack_token(std::string_view s, std::uint32_t begin, std::uint32_t end) {
  const std::uint32_t length = end - begin;
  if (std::size_t{begin} + 8 > s.size()) return pack8(s.substr(begin, length));
  std::uint64_t word = 0;
  std::memcpy(&word, s.data() + begin, 8);
  if constexpr (std::endian::native != std::endian::little) return pack8(s.substr(begin, length));
  // No branch on the length (names' lengths are what a predictor cannot
  // learn): keep its first min(length, 8) bytes; a token is never empty.
  const std::uint32_t kept = length < 8 ? length : 8;
  return word & (~std::uint64_t{0} >> (64 - 8 * kept));
}

// The end of the run of ASCII letters, digits, `_` and `$` from `pos`: 16
// bytes a step where SSE2 is there, so a name's length is no branch for a
// cold predictor to miss (names are most of a snippet's tokens).
std::uint32_t plain_name_end(std::string_view s, std::uint32_t pos) {
#if defined(__SSE2__)
  // `v` in [lo, hi] as one signed compare: v - lo - 128 lands in
  // [-128, -128 + hi - lo] exactly then (bytes wrap).
  const auto in_range = [](__m128i v, char lo, char hi) {
    const __m128i shifted = _mm_add_epi8(v, _mm_set1_epi8(static_cast<char>(-128 - lo)));
    return _mm_cmplt_epi8(shifted, _mm_set1_epi8(static_cast<char>(-128 + (hi - lo) + 1)));
  };
  while (std::size_t{pos} + 16 <= s.size()) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + pos));
    // Or-ing 0x20 folds A-Z onto a-z and moves no other byte into a-z.
    const __m128i letter = in_range(_mm_or_si128(bytes, _mm_set1_epi8(0x20)), 'a', 'z');
    const __m128i part = _mm_or_si128(_mm_or_si128(letter, in_range(bytes, '0', '9')),
                                      _mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('_')),
                                                   _mm_cmpeq_epi8(bytes, _mm_set1_epi8('$'))));
    const auto stop = static_cast<std::uint32_t>(~_mm_movemask_epi8(part) & 0xFFFF);
    if (stop != 0) return pos + static_cast<std::uint32_t>(std::countr_zero(stop));
    pos += 16;
  }
#endif
  while (pos < s.size() && has(s[pos], kPlainNamePart)) ++pos;
  return pos;
}

// The end of the run of spaces and tabs from `pos` (a line's indentation),
// 16 bytes a step where SSE2 is there.
std::uint32_t blanks_end(std::string_view s, std::uint32_t pos) {
#if defined(__SSE2__)
  while (std::size_t{pos} + 16 <= s.size()) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + pos));
    const __m128i blank = _mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(' ')),
                                       _mm_cmpeq_epi8(bytes, _mm_set1_epi8('\t')));
    const auto stop = static_cast<std::uint32_t>(~_mm_movemask_epi8(blank) & 0xFFFF);
    if (stop != 0) return pos + static_cast<std::uint32_t>(std::countr_zero(stop));
    pos += 16;
  }
#endif
  while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t')) ++pos;
  return pos;
}

}  // namespace

std::uint32_t line_terminator_at(std::string_view s, std::uint32_t pos) noexcept {
  if (pos >= s.size()) return 0;
  if (s[pos] == '\n') return 1;
  if (s[pos] == '\r') return pos + 1 < s.size() && s[pos + 1] == '\n' ? 2 : 1;
  if (static_cast<unsigned char>(s[pos]) == 0xE2 && pos + 2 < s.size() &&
      static_cast<unsigned char>(s[pos + 1]) == 0x80 &&
      (static_cast<unsigned char>(s[pos + 2]) == 0xA8 ||
       static_cast<unsigned char>(s[pos + 2]) == 0xA9)) {
    return 3;
  }
  return 0;
}

std::uint32_t Lexer::skip_trivia(std::uint32_t pos, bool& newline) const {
  const std::string_view s = source_;
  const auto n = static_cast<std::uint32_t>(s.size());
  if (pos == 0 && s.size() >= 2 && s[0] == '#' && s[1] == '!') {  // hashbang
    while (pos < n && line_terminator_at(s, pos) == 0) ++pos;
  }
  while (pos < n) {
    const char c = s[pos];
    if (!has(c, kTrivia)) break;
    if (has(c, kBlank)) {
      ++pos;
    } else if (c == '\n') {
      newline = true;
      pos = blanks_end(s, pos + 1);
    } else if (const std::uint32_t lt = line_terminator_at(s, pos)) {
      newline = true;
      pos += lt;
    } else if (c == '/' && pos + 1 < n && s[pos + 1] == '/') {
      while (pos < n && line_terminator_at(s, pos) == 0) ++pos;
    } else if (c == '/' && pos + 1 < n && s[pos + 1] == '*') {
      const std::size_t close = s.find("*/", pos + 2);
      if (close == std::string_view::npos) throw LexError{pos};
      for (std::uint32_t i = pos + 2; i < close; ++i) {
        if (line_terminator_at(s, i) != 0) newline = true;
      }
      pos = static_cast<std::uint32_t>(close + 2);
    } else if (static_cast<unsigned char>(c) >= 0x80) {
      const Decoded d = decode(s, pos);
      if (!is_unicode_space(d.code_point)) break;
      pos += d.length;
    } else {
      break;
    }
  }
  return pos;
}

std::uint32_t Lexer::scan_name_tail(std::uint32_t pos) const {
  const std::string_view s = source_;
  while (pos < s.size()) {
    const char c = s[pos];
    if (has(c, kNamePart) && c != '\\') {
      ++pos;
    } else if (c == '\\') {  // \uXXXX or \u{...}
      ++pos;
      if (pos < s.size() && s[pos] == 'u') ++pos;
      if (pos < s.size() && s[pos] == '{') {
        while (pos < s.size() && s[pos] != '}') ++pos;
        if (pos < s.size()) ++pos;
      } else {
        for (int i = 0; i < 4 && pos < s.size() && is_ascii_name_part(s[pos]); ++i) ++pos;
      }
    } else if (static_cast<unsigned char>(c) >= 0x80) {
      const Decoded d = decode(s, pos);
      if (is_unicode_space(d.code_point) || d.code_point == 0x2028 || d.code_point == 0x2029) break;
      pos += d.length;
    } else {
      break;
    }
  }
  return pos;
}

std::uint32_t Lexer::scan_number(std::uint32_t pos) const {
  const std::string_view s = source_;
  const auto part = [&](std::uint32_t p) {
    return p < s.size() && (is_ascii_name_part(s[p]) && s[p] != '\\' && s[p] != '$');
  };
  if (s[pos] == '0' && pos + 1 < s.size() &&
      (s[pos + 1] == 'x' || s[pos + 1] == 'X' || s[pos + 1] == 'o' || s[pos + 1] == 'O' ||
       s[pos + 1] == 'b' || s[pos + 1] == 'B')) {
    pos += 2;
    while (part(pos)) ++pos;
    return pos;
  }
  while (pos < s.size() && (is_digit(s[pos]) || s[pos] == '_')) ++pos;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    while (pos < s.size() && (is_digit(s[pos]) || s[pos] == '_')) ++pos;
  }
  if (pos < s.size() && (s[pos] == 'e' || s[pos] == 'E')) {
    std::uint32_t p = pos + 1;
    if (p < s.size() && (s[p] == '+' || s[p] == '-')) ++p;
    if (p < s.size() && is_digit(s[p])) {
      pos = p;
      while (pos < s.size() && (is_digit(s[pos]) || s[pos] == '_')) ++pos;
    }
  }
  if (pos < s.size() && s[pos] == 'n') ++pos;
  return pos;
}

std::uint32_t Lexer::scan_string(std::uint32_t pos) const {
  const std::string_view s = source_;
  const char quote = s[pos];
  const std::uint32_t begin = pos++;
  while (pos < s.size()) {
    const char c = s[pos];
    if (c == quote) return pos + 1;
    if (c == '\\') {
      ++pos;
      if (const std::uint32_t lt = line_terminator_at(s, pos)) {
        pos += lt;  // a line continuation
      } else if (pos < s.size()) {
        pos += static_cast<std::uint32_t>(core::utf8_step(s, pos).length);
      }
      continue;
    }
    // U+2028 and U+2029 are allowed in strings (ES2019); \n and \r are not.
    if (c == '\n' || c == '\r') break;
    ++pos;
  }
  throw LexError{begin};
}

std::uint32_t Lexer::scan_template_chars(std::uint32_t pos, bool& substitution) const {
  const std::string_view s = source_;
  const std::uint32_t begin = pos;
  while (pos < s.size()) {
    const char c = s[pos];
    if (c == '`') {
      substitution = false;
      return pos + 1;
    }
    if (c == '$' && pos + 1 < s.size() && s[pos + 1] == '{') {
      substitution = true;
      return pos + 2;
    }
    pos += c == '\\' && pos + 1 < s.size() ? 2 : 1;
  }
  throw LexError{begin == 0 ? 0 : begin - 1};
}

void Lexer::scan(std::uint32_t pos, Token& token) const {
  token.newline_before = false;
  const std::string_view s = source_;
  // Most tokens follow a single space or none: skip_trivia only where more
  // may come.
  if (pos < s.size()) pos += static_cast<std::uint32_t>(s[pos] == ' ');  // no branch on it
  if (pos == 0 || (pos < s.size() && has(s[pos], kTrivia))) {
    pos = skip_trivia(pos, token.newline_before);
  }
  token.begin = pos;
  if (pos >= s.size()) {
    token.kind = Tok::eof;
    token.end = pos;
    token.id = 0;
    return;
  }
  const char c = s[pos];
  const auto at = [&](std::uint32_t i) { return pos + i < s.size() ? s[pos + i] : '\0'; };
  const char c1 = at(1);
  // One jump on the first byte for every kind of token, punctuators'
  // lengths included: what comes next is as good as random to a predictor,
  // so one indirect branch a token rather than a chain of tests and then
  // a second jump for punctuators.
  std::uint32_t length = 1;
  token.kind = Tok::punct;
  switch (static_cast<Lead>(kLeads[static_cast<unsigned char>(c)])) {
    case Lead::plain_name: {
      // Most names are ASCII letters throughout: one table lookup a byte,
      // the general scan only from an escape or a non-ASCII byte on.
      std::uint32_t end = plain_name_end(s, pos + 1);
      if (end < s.size() && (s[end] == '\\' || static_cast<unsigned char>(s[end]) >= 0x80)) {
        end = scan_name_tail(end);
      }
      token.kind = Tok::name;
      length = end - pos;
      break;
    }
    case Lead::other_name: {  // `\` (an escape) or a byte >= 0x80
      const std::uint32_t end = scan_name_tail(pos);
      if (end == pos) throw LexError{pos};
      token.kind = Tok::name;
      length = end - pos;
      break;
    }
    case Lead::hash:
      if (!is_ascii_name_start(c1) && static_cast<unsigned char>(c1) < 0x80) throw LexError{pos};
      token.kind = Tok::private_name;
      length = scan_name_tail(pos + 1) - pos;
      break;
    case Lead::digit:
      token.kind = Tok::number;
      length = scan_number(pos) - pos;
      break;
    case Lead::dot:
      if (is_digit(c1)) {
        token.kind = Tok::number;
        length = scan_number(pos) - pos;
      } else {
        length = c1 == '.' && at(2) == '.' ? 3 : 1;
      }
      break;
    case Lead::quote:
      token.kind = Tok::string;
      length = scan_string(pos) - pos;
      break;
    case Lead::backtick: {
      bool substitution = false;
      length = scan_template_chars(pos + 1, substitution) - pos;
      token.kind = substitution ? Tok::template_head : Tok::template_full;
      break;
    }
    case Lead::equals:  // = == === =>
      length = c1 == '>' ? 2 : c1 == '=' ? (at(2) == '=' ? 3 : 2) : 1;
      break;
    case Lead::bang:  // ! != !==
      length = c1 == '=' ? (at(2) == '=' ? 3 : 2) : 1;
      break;
    case Lead::doubling:  // * ** **= *=  < << <<= <=  & && &&= &=  | || ||= |=  ? ?? ??= ?.
      if (c1 == c) {
        length = at(2) == '=' ? 3 : 2;
      } else if (c1 == '=' && c != '?') {
        length = 2;
      } else if (c == '?' && c1 == '.' && !is_digit(at(2))) {
        length = 2;  // ?. but not `a?.5:b`
      }
      break;
    case Lead::plus_minus:  // + ++ +=  - -- -=
      length = c1 == c || c1 == '=' ? 2 : 1;
      break;
    case Lead::with_equals:  // / /=  % %=  ^ ^=
      length = c1 == '=' ? 2 : 1;
      break;
    case Lead::single:  // `>` always alone (lexer.hpp), brackets, `;` `,` `~` `:` `@`
      break;
    case Lead::invalid:
      throw LexError{pos};
  }
  token.end = pos + length;
  token.id = spelling_id(s.substr(pos, length), pack_token(s, pos, token.end));
}

Token Lexer::rescan_regex(const Token& slash) const {
  const std::string_view s = source_;
  std::uint32_t pos = slash.begin + 1;
  bool in_class = false;
  while (true) {
    if (pos >= s.size() || line_terminator_at(s, pos) != 0) throw LexError{slash.begin};
    const char c = s[pos];
    if (c == '\\') {
      pos += 1;
      if (pos >= s.size() || line_terminator_at(s, pos) != 0) throw LexError{slash.begin};
      pos += static_cast<std::uint32_t>(core::utf8_step(s, pos).length);
      continue;
    }
    ++pos;
    if (c == '[') in_class = true;
    if (c == ']') in_class = false;
    if (c == '/' && !in_class) break;
  }
  Token token = slash;
  token.kind = Tok::regex;
  token.id = 0;
  token.end = scan_name_tail(pos);  // flags
  return token;
}

Token Lexer::rescan_template(const Token& brace) const {
  bool substitution = false;
  Token token = brace;
  token.id = 0;
  token.end = scan_template_chars(brace.begin + 1, substitution);
  token.kind = substitution ? Tok::template_middle : Tok::template_tail;
  return token;
}

}  // namespace corral::sandbox::typescript
