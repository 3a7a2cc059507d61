// The reader behind strip_types: a recursive-descent parser of JavaScript
// with TypeScript's additions, which records what to erase instead of
// building a tree. It follows the statement and expression structure only as
// far as finding types needs; types themselves are parsed to find where they
// end (object types and ambient bodies by bracket matching).
//
// TypeScript is ambiguous without lookahead in three places, resolved the way
// the TypeScript compiler resolves them:
//   - `(` and `<` that may start an arrow function: tried as one, and read as
//     an expression if that fails (failures are remembered per position, so
//     nested retries stay linear);
//   - `<` after an expression: type arguments only if they parse as types,
//     the `>` is not joined to a following `>` or `=`, and what follows can
//     follow type arguments (`(`, a template, a line break, a binary
//     operator, or anything that cannot start an expression);
//   - `a ? (b): c => d`: an arrow with a return type in a conditional's first
//     branch must be followed by the `:`.
#include "sandbox/typescript/strip.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/utf8.hpp"
#include "sandbox/typescript/lexer.hpp"
#include "sandbox/typescript/position_map.hpp"

namespace corral::sandbox::typescript {
namespace {

// This reading of the source does not work: a speculative parse backtracks;
// at the top level the source is returned unchanged.
struct ParseFail {};
// Nested past kMaxDepth: returned unchanged, never retried.
struct TooDeep {};
// More token scans than kWorkPerByte per byte of source: returned unchanged.
struct TooLong {};
// Syntax with no erasable form.
struct Refused {
  std::uint32_t at;
  std::string message;
};

struct Put {
  std::uint32_t at;
  char c;
};

// What the reader asks about a token's spelling, by its id (spelling.hpp):
// one lookup where a chain of comparisons went a different way per token.
struct SpellingTraits {
  std::array<std::uint8_t, kKnownSpellingCount + 1> precedence{};  // of a binary operator
  std::array<bool, kKnownSpellingCount + 1> reserved{};
  std::array<bool, kKnownSpellingCount + 1> assignment{};
  std::array<bool, kKnownSpellingCount + 1> prefix{};             // may not be the base of `**`
  std::array<bool, kKnownSpellingCount + 1> starts_expression{};  // punctuators only
  std::array<std::uint8_t, kKnownSpellingCount + 1> bracket{};    // kOpens, kCloses or 0
  static constexpr std::uint8_t kOpens = 1;
  static constexpr std::uint8_t kCloses = 2;
};

consteval SpellingTraits make_spelling_traits() {
  SpellingTraits traits;
  // `>` is 8 alone and 9 as `>>`/`>>>`: binary_precedence looks at the bytes
  // after it. `**` is Parser::kExponent.
  const std::pair<std::string_view, std::uint8_t> precedences[] = {
      {"in", 8},  {"instanceof", 8}, {"as", 8}, {"satisfies", 8}, {"<", 8},  {">", 8},
      {"<=", 8},  {"+", 10},         {"-", 10}, {"*", 11},        {"/", 11}, {"%", 11},
      {"&", 6},   {"^", 5},          {"|", 4},  {"==", 7},        {"!=", 7}, {"===", 7},
      {"!==", 7}, {"**", 12},        {"<<", 9}, {"&&", 3},        {"||", 2}, {"?\?", 1}};
  for (const auto& [text, precedence] : precedences)
    traits.precedence[known_spelling_id(text)] = precedence;
  // A reserved word that no expression begins with and no binding is named.
  for (const std::string_view text :
       {"do",      "if",      "in",      "for",      "try",      "var",
        "case",    "else",    "enum",    "with",     "break",    "catch",
        "const",   "throw",   "while",   "export",   "return",   "switch",
        "default", "extends", "finally", "continue", "debugger", "instanceof"}) {
    traits.reserved[known_spelling_id(text)] = true;
  }
  for (const std::string_view text :
       {"=", "+=", "-=", "*=", "/=", "%=", "**=", "<<=", "&=", "|=", "^=", "&&=", "||=", "?\?="}) {
    traits.assignment[known_spelling_id(text)] = true;
  }
  for (const std::string_view text : {"-", "+", "!", "~", "typeof", "void", "delete", "await"}) {
    traits.prefix[known_spelling_id(text)] = true;
  }
  for (const std::string_view text :
       {"(", "[", "{", "!", "~", "+", "-", "++", "--", "/", "/=", "<"}) {
    traits.starts_expression[known_spelling_id(text)] = true;
  }
  for (const std::string_view text : {"(", "[", "{"})
    traits.bracket[known_spelling_id(text)] = traits.kOpens;
  for (const std::string_view text : {")", "]", "}"})
    traits.bracket[known_spelling_id(text)] = traits.kCloses;
  return traits;
}

inline constexpr SpellingTraits kTraits = make_spelling_traits();

class Parser {
 public:
  explicit Parser(std::string_view source)
      : lexer_(source),
        work_budget_(kWorkPerByte * source.size() + 100'000),
        stack_base_(reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0))) {}

  void parse_program() {
    tok_ = scan(0);
    first_begin_ = tok_.begin;
    while (tok_.kind != Tok::eof) parse_statement();
  }

  std::string output() const;
  std::uint32_t furthest() const { return furthest_; }
  // Where the first erasure after a comparison `<` in its statement began
  // (UINT32_MAX if none; one a backtrack undid may count).
  std::uint32_t erased_in_comparison() const { return erased_in_comparison_; }

 private:
  // ---- tokens -------------------------------------------------------------
  std::string_view text() const { return lexer_.text(tok_); }
  [[gnu::always_inline]] bool spells(const Token& t, Spelling w) const { return t.spells(w); }
  // Ids tell punctuators from names: is() and is_name() need no kind.
  [[gnu::always_inline]] bool is(Spelling p) const { return tok_.spells(p); }
  bool is_name() const { return tok_.kind == Tok::name; }
  // A reserved word that no expression begins with and no binding is named
  // (`if`, `export`, `in`, ...): TypeScript reads `namespace in x` as an
  // expression, and `<T>export` as no expression at all.
  bool is_reserved_word(const Token& t) const { return kTraits.reserved[t.id]; }
  [[gnu::always_inline]] bool is_name(Spelling w) const { return tok_.spells(w); }
  // Every token the lexer scans for the parser is counted here (by scan,
  // peek and next), lookahead and re-reading after a failed attempt
  // included, so the work a source can cause is bounded by its length: no
  // input makes the reader slow.
  void count_scan() const {
    if (++work_ > work_budget_) throw TooLong{};
  }
  Token scan(std::uint32_t pos) const {
    count_scan();
    return lexer_.scan(pos);
  }
  // A prefix operator whose operand may not be the base of `**` (`++x ** 2`
  // is JavaScript, `-x ** 2` is not).
  bool is_prefix_operator(const Token& t) const { return kTraits.prefix[t.id]; }
  // The token after tok_, kept until the parser moves on: a lookahead is
  // usually followed by the step it looked at (scanning is a function of
  // the position alone, so the kept token stays right after a backtrack;
  // one whose scan threw is not kept).
  const Token& peek() const {
    if (lookahead_from_ != tok_.end) {
      count_scan();
      // Unkept first: a scan that throws leaves the token half written.
      lookahead_from_ = UINT32_MAX;
      lexer_.scan(tok_.end, lookahead_);
      lookahead_from_ = tok_.end;
    }
    return lookahead_;
  }
  bool peek_is(Spelling p) const {
    const Token& t = peek();
    return spells(t, p);
  }
  bool peek_is_name(Spelling w) const {
    const Token& t = peek();
    return spells(t, w);
  }
  void next() {
    prev_ = tok_;
    prev_end_ = tok_.end;
    if (lookahead_from_ == tok_.end) {
      tok_ = lookahead_;
    } else {
      // A scan that throws leaves tok_ half written: every catch of a
      // LexError restores tok_ (attempt) or gives up the reading.
      count_scan();
      lexer_.scan(tok_.end, tok_);
    }
    furthest_ = std::max(furthest_, tok_.begin);
  }
  [[noreturn]] void fail() const { throw ParseFail{}; }
  void expect(Spelling p) {
    if (!is(p)) fail();
    next();
  }
  void expect_name() {
    if (!is_name()) fail();
    next();
  }
  // The end of a statement: `;`, or where automatic semicolon insertion
  // would put one.
  void semicolon() {
    if (is(";")) {
      next();
      return;
    }
    if (is("}") || tok_.kind == Tok::eof) return;
    if (!tok_.newline_before) fail();
    // Ended at a line break: an erasure in the next statement can join the
    // two (`a <\ninfer\nX\n<T>, b > (c)` is two statements, erased a
    // call), so a comparison here counts for it too.
    if (compared_) compared_at_line_end_ = true;
  }

  // ---- speculation --------------------------------------------------------
  struct Snapshot {
    Token tok;
    Token prev;
    std::uint32_t prev_end;
    std::size_t erased;
    std::size_t puts;
  };
  Snapshot save() const { return {tok_, prev_, prev_end_, erased_.size(), puts_.size()}; }
  void restore(const Snapshot& s) {
    tok_ = s.tok;
    prev_ = s.prev;
    prev_end_ = s.prev_end;
    erased_.resize(s.erased);
    puts_.resize(s.puts);
  }
  template <class F>
  bool attempt(F&& f) {
    const Snapshot s = save();
    try {
      f();
      return true;
    } catch (const ParseFail&) {
      restore(s);
      return false;
    } catch (const LexError&) {
      restore(s);
      return false;
    }
  }
  // One level of recursion. Besides the level count, the stack the reader
  // has used since it started is bounded (kMaxStackBytes), so it fits a
  // small thread's stack whatever the compiler makes of its frames.
  struct Deeper {
    explicit Deeper(Parser& p) : parser(p) {
      const auto here = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
      if (++parser.depth_ > kMaxDepth || parser.stack_base_ - here > kMaxStackBytes) {
        --parser.depth_;
        throw TooDeep{};
      }
    }
    ~Deeper() { --parser.depth_; }
    Deeper(const Deeper&) = delete;
    Deeper& operator=(const Deeper&) = delete;
    Parser& parser;
  };

  // ---- erasing ------------------------------------------------------------
  void erase(std::uint32_t begin, std::uint32_t end) {
    if (begin >= end) return;
    erased_.push_back({begin, end});
    if (compared_) erased_in_comparison_ = std::min(erased_in_comparison_, begin);
  }
  void erase_token() { erase(tok_.begin, tok_.end); }
  // A statement or class member erased whole: nothing written inside it,
  // and an empty statement where it began unless it began the source or
  // followed `;` or `{`, where the lines around it cannot join. (A `}`
  // before a class member may end a field's initializer, `x = {}`: erased
  // without a `;`, `declare y: T` between it and `['z'] = 1` would join the
  // two into `x = {}['z'] = 1`.)
  void erase_whole(std::uint32_t begin, std::uint32_t end) {
    while (!puts_.empty() && puts_.back().at >= begin) puts_.pop_back();
    erase(begin, end);
    if (!separated_starts_.contains(begin)) puts_.push_back({begin, ';'});
  }
  // Notes that the statement or member starting here follows a separator.
  void note_start() {
    const bool separated = tok_.begin == first_begin_ ||
                           (prev_.kind == Tok::punct && (spells(prev_, ";") || spells(prev_, "{")));
    if (separated) separated_starts_.set(tok_.begin, 1);
  }
  // `c` written over the last character before `end`.
  // Puts `c` in place of the character that ends at `end` (output() finds
  // the character that holds the byte: walking back over continuation bytes
  // here went past invalid ones, `\x90\x90`, onto the line break before).
  void put_before(std::uint32_t end, char c) { puts_.push_back({end - 1, c}); }
  // Whether a line ends anywhere in [from, to) (comments included).
  bool line_break_between(std::uint32_t from, std::uint32_t to) const {
    for (std::uint32_t i = from; i < to; ++i) {
      if (line_terminator_at(lexer_.source(), i) != 0) return true;
    }
    return false;
  }
  // `: Type` from the colon: erased.
  void annotation() {
    const std::uint32_t begin = tok_.begin;
    next();
    parse_type();
    erase(begin, prev_end_);
  }
  [[noreturn]] void refuse(std::uint32_t at, std::string message) {
    throw Refused{at, std::move(message)};
  }

  // ---- statements ---------------------------------------------------------
  // Returns true when the statement was erased whole and declares no value
  // (a namespace holding only such statements is erased; any other is
  // refused).
  bool parse_statement();
  bool parse_declaration(std::uint32_t begin);
  void parse_block();
  // Sets a flag of the reader for as long as it lives (backtracking
  // included: a speculative parse unwinds through it).
  struct FlagScope {
    FlagScope(bool& flag, bool value) : flag(flag), outer(flag) { flag = value; }
    ~FlagScope() { flag = outer; }
    FlagScope(const FlagScope&) = delete;
    FlagScope& operator=(const FlagScope&) = delete;
    bool& flag;
    bool outer;
  };
  // A function's body: `yield` is an operator in it exactly when it is a
  // generator's, and it is no operand of a comparison.
  void parse_body(bool generator) {
    FlagScope yield_operator(in_generator_, generator);
    FlagScope statements(less_than_operand_, false);
    parse_block();
  }
  void parse_var_declaration();
  void parse_for();
  void parse_function(std::uint32_t begin, bool declaration);
  void parse_class();
  void parse_class_member();
  void parse_params();
  void parse_binding_target();
  // `[a, , ...b]`, `(x, ...y)`: from the opening bracket to past `close`,
  // each element (after an optional `...`) read by `element`; `holes`
  // allows empty elements (array literals and patterns).
  template <class Element>
  void parse_list(Spelling close, bool holes, Element&& element) {
    next();  // the opening bracket
    while (!is(close)) {
      if (holes && is(",")) {
        next();
        continue;
      }
      if (is("...")) next();
      element();
      if (!is(close)) expect(",");
    }
    next();
  }
  void parse_binding_element();
  void parse_property_name();
  bool parse_namespace(std::uint32_t begin, bool declared);
  void parse_declare(std::uint32_t begin);
  bool parse_import(std::uint32_t begin);
  bool parse_export(std::uint32_t begin);
  void parse_specifiers();
  void parse_type_alias(std::uint32_t begin);
  void parse_interface(std::uint32_t begin);
  void skip_balanced();

  // ---- expressions --------------------------------------------------------
  void parse_expression();
  void parse_assignment();
  bool try_arrow(bool in_conditional);
  bool might_be_arrow();
  bool opens_parameter_list() const;
  void parse_arrow(bool in_conditional);
  void parse_binary();
  void parse_unary();
  void parse_lhs();
  void parse_new();
  void parse_primary();
  void parse_arguments();
  void parse_template();
  void parse_object_literal();
  bool try_type_arguments_in_expression();
  // JavaScript's precedence of the binary operator here: `??` 1, `||` 2,
  // `&&` 3, `|` 4, `^` 5, `&` 6, equality 7, relational (and `as`) 8,
  // shifts 9, `+ -` 10, `* / %` 11, `**` 12; 0 for no binary operator.
  int binary_precedence() const;
  static constexpr int kExponent = 12;
  static_assert(kTraits.precedence[Spelling("**").id()] == kExponent);
  static constexpr int kNoOperator = 99;
  // Whether try_type_arguments_in_expression would read the `<` here as
  // type arguments; reads nothing.
  bool would_read_type_arguments();
  // After type arguments ending at `end`: whether TypeScript keeps them
  // (the token after them is one they can be followed by).
  bool type_arguments_fit(std::uint32_t end) const;
  bool might_be_type_arguments() const;
  int joined_greater(bool& assignment) const;
  bool is_assignment_operator() const;
  bool is_binary_operator() const;
  bool starts_expression() const;
  // After `yield` or `await`: `-1`, `/re/` and `<T>x` are operands there.
  bool starts_operand() const {
    return starts_expression() && !is_name("as") && !is_name("satisfies");
  }
  bool modifier_follows(bool same_line) const;

  // ---- types --------------------------------------------------------------
  void parse_type(bool allow_conditional = true);
  // `A, B<C>, D`: heritage lists (`implements`, an interface's `extends`).
  void parse_types() {
    parse_type();
    while (is(",")) {
      next();
      parse_type();
    }
  }
  void parse_union();
  void parse_intersection();
  void parse_type_operator();
  void parse_postfix_type();
  void parse_primary_type();
  void parse_type_arguments();
  void parse_type_parameters();
  void parse_template_type();
  void erase_type_parameters() {
    const std::uint32_t begin = tok_.begin;
    parse_type_parameters();
    erase(begin, prev_end_);
  }

  Lexer lexer_;
  mutable std::uint64_t work_ = 0;
  std::uint64_t work_budget_;
  std::uintptr_t stack_base_;  // the frame that made the parser (stacks grow down)
  // Where each `(` skip_balanced has passed closes (the end of its `)`).
  PositionMap paren_end_;
  std::vector<std::pair<char, std::uint32_t>> open_brackets_;  // skip_balanced's
  Token tok_;
  Token prev_;               // the token before tok_
  mutable Token lookahead_;  // peek's: the token scanned from lookahead_from_
  mutable std::uint32_t lookahead_from_ = UINT32_MAX;
  std::uint32_t first_begin_ = 0;
  PositionMap separated_starts_;  // a set: the values are 1
  std::uint32_t prev_end_ = 0;
  std::uint32_t furthest_ = 0;
  int depth_ = 0;
  bool conditional_branch_ = false;  // parsing `a ? HERE : c`
  // Inside a generator's body, where `yield` is an operator; elsewhere it is
  // a name (`yield < b > c` compares in a script).
  bool in_generator_ = false;
  // Reading the right operand of a `<` that is a comparison. An erasure there
  // can make `a < [<T>b] > (c)` into `a < [   b] > (c)`, which TypeScript
  // reads as a call with type arguments: the output would not read back
  // as itself. A call's arguments and a function's body end it (what is
  // erased inside them cannot make a type of the operand).
  bool less_than_operand_ = false;
  // A comparison `<` came before in this statement: `a < b, c as T > (d)`
  // erased would read as a call, as would `a < b as T > (c)`.
  bool compared_ = false;
  // The statement before ended at a line break with compared_ set.
  bool compared_at_line_end_ = false;
  std::uint32_t erased_in_comparison_ = UINT32_MAX;
  // Where the latest `as` or `satisfies` erased began, and the latest
  // `<T>` assertion.
  std::uint32_t as_erased_at_ = UINT32_MAX;
  std::uint32_t angle_assertion_at_ = UINT32_MAX;
  // Where the latest arrow's concise body or expression statement began.
  std::uint32_t body_start_ = 0xFFFFFFFFu;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> erased_;
  std::vector<Put> puts_;
  PositionMap arrow_failed_at_;  // a set: the values are 1
  // Type arguments by the position of their `<`: where they end, or 0.
  PositionMap type_arguments_end_;
};

// ---- statements -------------------------------------------------------------

bool Parser::parse_statement() {
  // Each statement starts without a comparison before it, unless the one
  // before had one and ended at a line break (semicolon()); one nested in
  // an expression leaves the outer statement's as it found it.
  FlagScope statement(compared_, std::exchange(compared_at_line_end_, false));
  return parse_declaration(tok_.begin);
}

bool Parser::parse_declaration(std::uint32_t begin) {
  Deeper d(*this);
  if (begin == tok_.begin) note_start();
  if (tok_.kind == Tok::punct) {
    if (is("{")) {
      parse_block();
      return false;
    }
    if (is(";")) {
      next();
      return false;
    }
    if (is("@")) refuse(tok_.begin, "decorator");
  }
  if (tok_.kind == Tok::name) {
    const Token after = peek();
    const bool after_same_line = !after.newline_before;
    const bool after_is_name = after.kind == Tok::name;
    // What a declaration names: `type in`, `namespace in` are expressions.
    const bool after_is_identifier = after_is_name && !is_reserved_word(after);
    const auto after_is = [&](Spelling p) { return after.kind == Tok::punct && spells(after, p); };
    if (spells(tok_, "const") && after_is_name && spells(after, "enum")) refuse(tok_.begin, "enum");
    if (spells(tok_, "var") || spells(tok_, "const") ||
        (spells(tok_, "let") && (after_is_identifier || after_is("[") || after_is("{")))) {
      parse_var_declaration();
      semicolon();
      return false;
    }
    if (spells(tok_, "function") ||
        (spells(tok_, "async") && after_is_name && spells(after, "function") && after_same_line)) {
      parse_function(begin, true);
      return false;
    }
    if (spells(tok_, "class")) {
      parse_class();
      return false;
    }
    if (spells(tok_, "abstract") && after_is_name && spells(after, "class") && after_same_line) {
      erase_token();
      next();
      parse_class();
      return false;
    }
    if (spells(tok_, "type") && after_is_identifier && after_same_line) {
      parse_type_alias(begin);
      return true;
    }
    if (spells(tok_, "interface") && after_is_identifier && after_same_line) {
      parse_interface(begin);
      return true;
    }
    if (spells(tok_, "declare") && after_same_line &&
        (after_is_identifier || spells(after, "const") || spells(after, "var") ||
         spells(after, "enum"))) {
      // Erased whole; a declared value still makes a namespace around it
      // hold a value (TypeScript would emit the namespace).
      const bool type_only = spells(after, "type") || spells(after, "interface");
      parse_declare(begin);
      return type_only;
    }
    if (spells(tok_, "enum") && after_is_identifier && after_same_line) refuse(tok_.begin, "enum");
    if ((spells(tok_, "namespace") || spells(tok_, "module")) && after_same_line &&
        (after_is_identifier || (spells(tok_, "module") && after.kind == Tok::string))) {
      return parse_namespace(begin, false);
    }
    if (spells(tok_, "import") && !after_is("(") && !after_is(".")) return parse_import(begin);
    if (spells(tok_, "export")) return parse_export(begin);
    if (spells(tok_, "if")) {
      next();
      expect("(");
      parse_expression();
      expect(")");
      parse_statement();
      if (is_name("else")) {
        next();
        parse_statement();
      }
      return false;
    }
    if (spells(tok_, "for")) {
      parse_for();
      return false;
    }
    if (spells(tok_, "while") || spells(tok_, "with")) {
      next();
      expect("(");
      parse_expression();
      expect(")");
      parse_statement();
      return false;
    }
    if (spells(tok_, "do")) {
      next();
      parse_statement();
      if (!is_name("while")) fail();
      next();
      expect("(");
      parse_expression();
      expect(")");
      if (is(";")) next();
      return false;
    }
    if (spells(tok_, "return") || spells(tok_, "throw")) {
      next();
      if (!is(";") && !is("}") && tok_.kind != Tok::eof && !tok_.newline_before) {
        parse_expression();
      }
      semicolon();
      return false;
    }
    if (spells(tok_, "break") || spells(tok_, "continue")) {
      next();
      if (is_name() && !tok_.newline_before) next();
      semicolon();
      return false;
    }
    if (spells(tok_, "debugger")) {
      next();
      semicolon();
      return false;
    }
    if (spells(tok_, "switch")) {
      next();
      expect("(");
      parse_expression();
      expect(")");
      expect("{");
      while (!is("}")) {
        if (tok_.kind == Tok::eof) fail();
        if (is_name("case")) {
          next();
          parse_expression();
          expect(":");
        } else if (is_name("default") && peek_is(":")) {
          next();
          next();
        } else {
          parse_statement();
        }
      }
      next();
      return false;
    }
    if (spells(tok_, "try")) {
      next();
      parse_block();
      if (is_name("catch")) {
        next();
        if (is("(")) {
          next();
          parse_binding_target();
          if (is(":")) annotation();
          expect(")");
        }
        parse_block();
      }
      if (is_name("finally")) {
        next();
        parse_block();
      }
      return false;
    }
    if (after_is(":")) {  // a label
      next();
      next();
      parse_statement();
      return false;
    }
  }
  body_start_ = tok_.begin;  // an expression statement
  parse_expression();
  semicolon();
  return false;
}

void Parser::parse_block() {
  expect("{");
  while (!is("}")) {
    if (tok_.kind == Tok::eof) fail();
    parse_statement();
  }
  next();
}

void Parser::parse_var_declaration() {
  next();  // var, let, const
  for (;;) {
    parse_binding_target();
    if (is("!") && !tok_.newline_before) {  // definite assignment: let x!: T
      erase_token();
      next();
    }
    if (is(":")) annotation();
    if (is("=")) {
      next();
      parse_assignment();
    }
    if (!is(",")) break;
    next();
  }
}

void Parser::parse_for() {
  next();  // for
  if (is_name("await")) next();
  expect("(");
  if (!is(";")) {
    const Token after = peek();
    if (is_name("var") || is_name("const") ||
        (is_name("let") &&
         (after.kind == Tok::name ||
          (after.kind == Tok::punct && (spells(after, "[") || spells(after, "{")))))) {
      parse_var_declaration();
    } else {
      parse_expression();  // `x in o` is read whole here; `)` follows
    }
  }
  if (is(";")) {
    next();
    if (!is(";")) parse_expression();
    expect(";");
    if (!is(")")) parse_expression();
  } else if (is_name("of") || is_name("in")) {
    next();
    parse_expression();
  }
  expect(")");
  parse_statement();
}

void Parser::parse_function(std::uint32_t begin, bool declaration) {
  if (is_name("async")) next();
  if (!is_name("function")) fail();
  next();
  const bool generator = is("*");
  if (generator) next();
  if (is_name()) next();
  if (is("<")) erase_type_parameters();
  parse_params();
  if (is(":")) annotation();
  if (is("{")) {
    parse_body(generator);
    return;
  }
  if (!declaration) fail();
  semicolon();  // an overload signature (or a declared function)
  erase_whole(begin, prev_end_);
}

void Parser::parse_params() {
  expect("(");
  bool first = true;
  while (!is(")")) {
    Deeper d(*this);
    const std::uint32_t begin = tok_.begin;
    if (is("@")) refuse(tok_.begin, "decorator");
    if (is_name() && modifier_follows(false)) {
      if (spells(tok_, "public") || spells(tok_, "private") || spells(tok_, "protected") ||
          spells(tok_, "readonly") || spells(tok_, "override")) {
        const Token after = peek();
        if (after.kind == Tok::name ||
            (after.kind == Tok::punct && (spells(after, "[") || spells(after, "{")))) {
          // Outside a constructor TypeScript refuses them too.
          refuse(tok_.begin, "parameter property");
        }
      }
    }
    // A `this` parameter types the function's `this`; it is no parameter
    // to JavaScript (which refuses the name), typed or not.
    if (first && is_name("this") && (peek_is(":") || peek_is(",") || peek_is(")"))) {
      next();
      if (is(":")) annotation();
      if (is(",")) next();
      erase(begin, prev_end_);
      first = false;
      continue;
    }
    // Anywhere else (`this?`, `this = 1`, not first) it is no parameter
    // TypeScript takes either.
    if (is_name("this")) fail();
    first = false;
    if (is("...")) next();
    parse_binding_target();
    if (is("?")) {
      erase_token();
      next();
    }
    if (is(":")) annotation();
    if (is("=")) {
      next();
      parse_assignment();
    }
    if (!is(")")) expect(",");
  }
  next();
}

void Parser::parse_binding_target() {
  Deeper d(*this);
  if (is_name()) {
    next();
    return;
  }
  if (is("[")) {
    parse_list("]", true, [&] { parse_binding_element(); });
    return;
  }
  if (is("{")) {
    next();
    while (!is("}")) {
      if (is("...")) {
        next();
        parse_binding_target();
      } else {
        parse_property_name();
        if (is(":")) {
          next();
          parse_binding_element();
        } else if (is("=")) {
          next();
          parse_assignment();
        }
      }
      if (!is("}")) expect(",");
    }
    next();
    return;
  }
  fail();
}

void Parser::parse_binding_element() {
  parse_binding_target();
  if (is("=")) {
    next();
    parse_assignment();
  }
}

void Parser::parse_property_name() {
  switch (tok_.kind) {
    case Tok::name:
    case Tok::string:
    case Tok::number:
    case Tok::private_name:
      next();
      return;
    default:
      break;
  }
  if (is("[")) {
    next();
    parse_assignment();
    expect("]");
    return;
  }
  fail();
}

void Parser::parse_class() {
  next();  // class
  if (is_name() && !is_name("extends") && !is_name("implements")) next();
  if (is("<")) erase_type_parameters();
  if (is_name("extends")) {
    next();
    parse_lhs();
    if (is("<")) {  // `extends Base<T>`: always type arguments here
      const std::uint32_t at = tok_.begin;
      parse_type_arguments();
      erase(at, prev_end_);
    }
  }
  if (is_name("implements")) {
    const std::uint32_t at = tok_.begin;
    next();
    parse_types();
    erase(at, prev_end_);
  }
  expect("{");
  while (!is("}")) {
    if (tok_.kind == Tok::eof) fail();
    if (is(";")) {
      next();
      continue;
    }
    parse_class_member();
  }
  next();
}

void Parser::parse_class_member() {
  Deeper d(*this);
  note_start();
  const std::uint32_t begin = tok_.begin;
  if (is("@")) refuse(tok_.begin, "decorator");
  bool whole = false;  // declare and abstract members have no JavaScript
  for (;;) {
    if (!is_name()) break;
    if (spells(tok_, "public") || spells(tok_, "private") || spells(tok_, "protected") ||
        spells(tok_, "readonly") || spells(tok_, "override") || spells(tok_, "declare") ||
        spells(tok_, "abstract")) {
      if (!modifier_follows(true)) break;
      if (spells(tok_, "declare") || spells(tok_, "abstract")) whole = true;
      erase_token();
      next();
    } else if (spells(tok_, "static")) {
      if (!modifier_follows(false)) break;
      next();
      if (is("{")) {  // a static block
        parse_body(false);
        return;
      }
    } else if (spells(tok_, "accessor")) {
      if (!modifier_follows(true)) break;
      next();
    } else {
      break;
    }
  }
  // An index signature: [key: string]: T
  if (is("[")) {
    const Snapshot s = save();
    next();
    const bool index_signature = is_name() && peek_is(":");
    restore(s);
    if (index_signature) {
      skip_balanced();
      if (is("?")) next();
      if (is(":")) annotation();
      semicolon();
      erase_whole(begin, prev_end_);
      return;
    }
  }
  if ((is_name("get") || is_name("set")) && modifier_follows(false) && !peek_is("*")) next();
  if (is_name("async") && modifier_follows(true)) next();
  const bool generator = is("*");
  if (generator) next();
  parse_property_name();
  std::uint32_t optional_at = 0;
  bool marked = false;  // `?` or `!` erased after the name
  if (is("?") || (is("!") && !tok_.newline_before)) {
    optional_at = tok_.begin;
    erase_token();
    marked = true;
    next();
  }
  if (is("<") || is("(")) {
    if (is("<")) erase_type_parameters();
    parse_params();
    if (is(":")) annotation();
    if (is("{") && !whole) {
      parse_body(generator);
      return;
    }
    if (is("{")) fail();  // a declared or abstract method has no body
    semicolon();          // an overload signature
    erase_whole(begin, prev_end_);
    return;
  }
  std::uint32_t erased_end = marked ? optional_at + 1 : 0;
  if (is(":")) {
    annotation();
    erased_end = prev_end_;
  }
  bool initialized = false;
  if (is("=")) {
    next();
    parse_assignment();
    initialized = true;
  }
  const bool written_semicolon = is(";");
  semicolon();
  if (whole) {
    erase_whole(begin, prev_end_);
  } else if (erased_end != 0 && !initialized && !written_semicolon) {
    // `get: number` before `foo() {}` on the next line would be a getter.
    put_before(erased_end, ';');
  }
}

bool Parser::parse_namespace(std::uint32_t begin, bool declared) {
  const std::uint32_t keyword = tok_.begin;
  next();  // namespace, module
  if (tok_.kind == Tok::string) {
    next();
  } else {
    expect_name();
    while (is(".")) {
      next();
      expect_name();
    }
  }
  if (declared) {
    if (is("{")) {
      skip_balanced();
    } else {
      semicolon();
    }
    return true;
  }
  expect("{");
  bool types_only = true;
  while (!is("}")) {
    if (tok_.kind == Tok::eof) fail();
    if (!parse_statement()) types_only = false;
  }
  next();
  if (!types_only) refuse(keyword, "namespace");
  erase_whole(begin, prev_end_);
  return true;
}

void Parser::parse_declare(std::uint32_t begin) {
  erase_token();
  next();  // declare
  if (is_name("var") || is_name("let") || is_name("const")) {
    if (is_name("const") && peek_is_name("enum")) next();
    if (is_name("enum")) {
      next();
      expect_name();
      skip_balanced();
    } else {
      parse_var_declaration();
      semicolon();
    }
  } else if (is_name("function") || is_name("async")) {
    parse_function(begin, true);
  } else if (is_name("abstract") || is_name("class")) {
    if (is_name("abstract")) next();
    next();  // class
    if (is_name() && !is_name("extends") && !is_name("implements")) next();
    if (is("<")) parse_type_parameters();               // <T = {a: 1}>
    if (is_name("extends") || is_name("implements")) {  // types, with their own braces
      while (is_name("extends") || is_name("implements")) {
        next();
        parse_types();
      }
    }
    if (!is("{")) fail();
    skip_balanced();
  } else if (is_name("enum")) {
    next();
    expect_name();
    skip_balanced();
  } else if (is_name("namespace") || is_name("module")) {
    parse_namespace(begin, true);
  } else if (is_name("global")) {
    next();
    skip_balanced();
  } else if (is_name("type")) {
    parse_type_alias(begin);
  } else if (is_name("interface")) {
    parse_interface(begin);
  } else {
    fail();
  }
  erase_whole(begin, prev_end_);
}

void Parser::parse_type_alias(std::uint32_t begin) {
  next();  // type
  expect_name();
  if (is("<")) parse_type_parameters();
  expect("=");
  parse_type();
  semicolon();
  erase_whole(begin, prev_end_);
}

void Parser::parse_interface(std::uint32_t begin) {
  next();  // interface
  expect_name();
  if (is("<")) parse_type_parameters();
  if (is_name("extends")) {
    next();
    parse_types();
  }
  if (!is("{")) fail();
  skip_balanced();
  erase_whole(begin, prev_end_);
}

bool Parser::parse_import(std::uint32_t begin) {
  next();                          // import
  if (tok_.kind == Tok::string) {  // import "side-effect";
    next();
    semicolon();
    return false;
  }
  if (is_name("type") && !peek_is(",") && !peek_is_name("from") && !peek_is("=")) {
    // import type X from "m"; import type {A} from "m"; import type * as N from "m"
    next();
    if (is_name() && peek_is("=")) refuse(begin, "import =");
    while (tok_.kind != Tok::eof && !is_name("from")) {
      if (is("{")) {
        skip_balanced();
      } else {
        next();
      }
    }
    expect_name();
    if (tok_.kind != Tok::string) fail();
    next();
    if ((is_name("with") || is_name("assert")) && !tok_.newline_before) {
      next();
      skip_balanced();
    }
    semicolon();
    erase_whole(begin, prev_end_);
    return true;
  }
  if (is_name() && peek_is("=")) refuse(begin, "import =");
  if (is_name() && !is_name("from")) {  // default import
    next();
    if (is(",")) next();
  } else if (is_name("from") && peek_is_name("from")) {
    next();
  }
  if (is("*")) {
    next();
    if (!is_name("as")) fail();
    next();
    expect_name();
  } else if (is("{")) {
    parse_specifiers();
  }
  if (!is_name("from")) fail();
  next();
  if (tok_.kind != Tok::string) fail();
  next();
  if ((is_name("with") || is_name("assert")) && !tok_.newline_before) {
    next();
    skip_balanced();
  }
  semicolon();
  return false;
}

// { a, type B, c as d, "e" as f }: inline `type` specifiers erased with
// their comma.
void Parser::parse_specifiers() {
  expect("{");
  while (!is("}")) {
    const std::uint32_t begin = tok_.begin;
    bool type_only = false;
    if (is_name("type")) {
      // As TypeScript reads them: `type` alone (`type,` `type }`), `type as
      // x` and `type as as` name a value called type (the last imports it
      // as `as`); `type x`, `type as` (a type called as) and `type as as x`
      // are type-only.
      const Token after = peek();
      if (after.kind == Tok::name && spells(after, "as")) {
        const Token third = scan(after.end);
        if (third.kind == Tok::name && spells(third, "as")) {
          type_only = scan(third.end).kind == Tok::name;  // type as as x
        } else {
          type_only = third.kind != Tok::name;  // type as
        }
      } else {
        type_only = after.kind != Tok::punct;  // type x
      }
      if (type_only) next();
    }
    if (tok_.kind != Tok::name && tok_.kind != Tok::string) fail();
    next();
    if (is_name("as")) {
      next();
      if (tok_.kind != Tok::name && tok_.kind != Tok::string) fail();
      next();
    }
    if (!is("}")) expect(",");
    if (type_only) erase(begin, prev_end_);
  }
  next();
}

bool Parser::parse_export(std::uint32_t begin) {
  next();  // export
  if (is("=")) refuse(begin, "export =");
  if (is_name("type") && (peek_is("{") || peek_is("*"))) {
    next();
    if (is("*")) {
      next();
      if (is_name("as")) {
        next();
        expect_name();
      }
    } else {
      skip_balanced();
    }
    if (is_name("from")) {
      next();
      if (tok_.kind != Tok::string) fail();
      next();
    }
    semicolon();
    erase_whole(begin, prev_end_);
    return true;
  }
  if (is_name("as") && peek_is_name("namespace")) {  // export as namespace N;
    next();
    next();
    expect_name();
    semicolon();
    erase_whole(begin, prev_end_);
    return true;
  }
  if (is_name("import") && peek().kind == Tok::name) refuse(begin, "import =");
  if (is("*")) {
    next();
    if (is_name("as")) {
      next();
      if (tok_.kind != Tok::name && tok_.kind != Tok::string) fail();
      next();
    }
    if (!is_name("from")) fail();
    next();
    if (tok_.kind != Tok::string) fail();
    next();
    semicolon();
    return false;
  }
  if (is("{")) {
    parse_specifiers();
    if (is_name("from")) {
      next();
      if (tok_.kind != Tok::string) fail();
      next();
    }
    semicolon();
    return false;
  }
  if (is_name("default")) {
    next();
    if (is_name("interface") && peek().kind == Tok::name) {
      parse_interface(begin);
      return true;
    }
    // `abstract` then a line break is an expression to TypeScript (the
    // value of `abstract` exported, then a class of its own).
    if (is_name("abstract") && peek_is_name("class") && !peek().newline_before) {
      erase_token();
      next();
    }
    if (is_name("function") || (is_name("async") && peek_is_name("function"))) {
      parse_function(begin, true);
      return false;
    }
    if (is_name("class")) {
      parse_class();
      return false;
    }
    parse_assignment();
    semicolon();
    return false;
  }
  // Only a declaration may follow (found by fuzz_strip_types: `export
  // type!* x` read as an exported expression, its `!` erased, read again as
  // `export type *`), and as in TypeScript a contextual keyword declares
  // only with the next token on its line (fuzz_strip_types again: `export
  // type` then a line break was read as an exported expression).
  const bool same_line = tok_.kind == Tok::name && !peek().newline_before;
  const bool declaration =
      is("@") ||
      (tok_.kind == Tok::name &&
       (is_name("var") || is_name("let") || is_name("const") || is_name("function") ||
        is_name("class") || is_name("enum") || is_name("interface") ||
        (is_name("async") && peek_is_name("function") && same_line) ||
        (is_name("abstract") && peek_is_name("class") && same_line) ||
        ((is_name("type") || is_name("declare")) && peek().kind == Tok::name && same_line) ||
        ((is_name("namespace") || is_name("module")) &&
         (peek().kind == Tok::name || peek().kind == Tok::string) && same_line)));
  if (!declaration) fail();
  return parse_declaration(begin);
}

// From an opening bracket to past its match, without reading what is
// between: object types, interface bodies, ambient declarations.
void Parser::skip_balanced() {
  // The closers expected ('`' for a template substitution) and where each
  // bracket opened, so every `(` passed on the way is remembered as closed
  // (might_be_arrow then never scans the same parentheses twice). The
  // vector is the parser's, so its memory is reused (this runs for most
  // parenthesised expressions).
  std::vector<std::pair<char, std::uint32_t>>& open = open_brackets_;
  open.clear();
  do {
    if (tok_.kind == Tok::eof) fail();
    if (tok_.kind == Tok::template_head) {
      open.emplace_back('`', tok_.begin);
    } else if (const std::uint8_t bracket = kTraits.bracket[tok_.id]; bracket != 0) {
      const char c = lexer_.source()[tok_.begin];
      if (bracket == SpellingTraits::kOpens) {
        open.emplace_back(c == '{' ? '}' : c == '(' ? ')' : ']', tok_.begin);
        if (open.size() > static_cast<std::size_t>(kMaxDepth)) throw TooDeep{};
      } else {
        if (open.empty()) fail();
        if (open.back().first == '`' && c == '}') {
          tok_ = lexer_.rescan_template(tok_);
          if (tok_.kind == Tok::template_tail) open.pop_back();
        } else if (open.back().first != c) {
          fail();
        } else {
          if (c == ')') paren_end_.add(open.back().second, tok_.end);
          open.pop_back();
        }
      }
    }
    next();
  } while (!open.empty());
}

// ---- expressions ------------------------------------------------------------

void Parser::parse_expression() {
  parse_assignment();
  while (is(",")) {
    next();
    parse_assignment();
  }
}

void Parser::parse_assignment() {
  Deeper d(*this);
  const bool in_conditional = conditional_branch_;
  conditional_branch_ = false;
  const std::uint32_t lhs_begin = tok_.begin;
  const std::size_t erased_before = erased_.size();
  if (is_name("yield") && in_generator_) {
    const Token after = peek();
    next();
    if (!after.newline_before) {
      if (is("*")) next();
      if (starts_operand()) parse_assignment();
    }
    return;
  }
  if (is_name() && peek_is("=>")) {  // x => ...
    const Token arrow = peek();
    if (!arrow.newline_before) {
      next();
      next();
      FlagScope scope(in_generator_, false);  // an arrow is never a generator
      if (is("{")) {
        parse_block();
      } else {
        body_start_ = tok_.begin;
        conditional_branch_ = in_conditional;  // as TypeScript: see parse_arrow
        parse_assignment();
      }
      return;
    }
  }
  if (is("(") || is("<") ||
      (is_name("async") && !peek().newline_before &&
       (peek().kind == Tok::name || peek_is("(") || peek_is("<")))) {
    if (try_arrow(in_conditional)) return;
  }
  parse_binary();
  if (is("?")) {
    next();
    conditional_branch_ = true;
    parse_assignment();
    conditional_branch_ = false;
    expect(":");
    // The false branch inherits the rule, as an arrow's concise body does.
    conditional_branch_ = in_conditional;
    parse_assignment();
    return;
  }
  if (is_assignment_operator()) {
    // `y as T = b` and `<T>y = b` assign to no target in TypeScript (a
    // syntax error there); erased, `y      = b` would assign to y. Not read.
    if (!erased_.empty() && erased_.back().first == as_erased_at_ &&
        erased_.back().second == prev_end_) {
      fail();
    }
    if (erased_.size() > erased_before && erased_[erased_before].first == lhs_begin &&
        angle_assertion_at_ == lhs_begin) {
      fail();
    }
    if (is(">")) {
      bool assignment = false;
      const int n = joined_greater(assignment);
      for (int i = 0; i <= n; ++i) next();  // the `>`s and the `=`
    } else {
      next();
    }
    parse_assignment();
  }
}

// Lookahead without parsing: whether the `(` here closes before `=>` or `:`
// (an arrow, or an arrow's return type). Most parentheses are not arrows,
// and a failed attempt costs an exception: this answers in one token scan.
// `/` counts as division here; a regular expression holding a bracket inside
// an arrow's parameter list only makes the attempt that follows fail.
bool Parser::might_be_arrow() {
  if (!is("(")) return true;  // `<T>(...)`, `async x`: attempted directly
  if (const std::uint32_t* known = paren_end_.find(tok_.begin)) {
    const Token after = scan(*known);
    return after.kind == Tok::punct &&
           ((spells(after, "=>") && !after.newline_before) || spells(after, ":"));
  }
  const Snapshot s = save();
  bool arrow = false;
  try {
    if (opens_parameter_list()) {
      skip_balanced();
      // A return type's `:` may start a line; `=>` may not.
      arrow = (is("=>") && !tok_.newline_before) || is(":");
    }
  } catch (const ParseFail&) {
  } catch (const LexError&) {
  }
  restore(s);
  return arrow;
}

// Whether the tokens after this `(` can begin an arrow's parameter list:
// `)`, `...`, a destructuring `[` or `{`, or a name followed by what may
// follow a parameter's name. Anything else (`(c * 9)`, `(await f())`,
// `(out[k] ??= [])`) is a parenthesised expression, known from two tokens
// instead of a scan to its `)` (which cost a sixth of a strip's
// instructions, every parenthesised expression's tokens scanned twice).
bool Parser::opens_parameter_list() const {
  const Token& first = peek();
  if (first.kind == Tok::punct) {
    return spells(first, ")") || spells(first, "...") || spells(first, "[") || spells(first, "{");
  }
  if (first.kind != Tok::name) return false;
  const Token second = scan(first.end);
  return second.kind == Tok::punct &&
         (spells(second, ",") || spells(second, ")") || spells(second, ":") ||
          spells(second, "?") || spells(second, "="));
}

bool Parser::try_arrow(bool in_conditional) {
  const std::uint32_t at = tok_.begin;
  if (arrow_failed_at_.contains(at)) return false;
  if (!might_be_arrow()) {
    arrow_failed_at_.set(at, 1);
    return false;
  }
  if (attempt([&] { parse_arrow(in_conditional); })) return true;
  arrow_failed_at_.set(at, 1);
  return false;
}

void Parser::parse_arrow(bool in_conditional) {
  const bool async = is_name("async");
  if (async) next();
  if (is("<")) {
    const std::uint32_t less = tok_.begin;
    erase_type_parameters();
    // No line may end between `async` and its `(`: when the type parameters
    // span lines (or a line ends after them), the `(` moves to the `<`, on
    // the line of `async`; erased in place, JavaScript would read
    // `async\n(x) => x` as a call of `async` followed by a stray `=>`.
    if (async && line_break_between(less, tok_.begin)) {
      if (!is("(")) fail();
      puts_.push_back({less, '('});
      puts_.push_back({tok_.begin, ' '});
    }
  }
  std::uint32_t close_paren = 0;
  if (is_name()) {
    next();  // async x => ...
  } else {
    if (!is("(")) fail();
    parse_params();
    close_paren = prev_end_ - 1;
  }
  bool return_type = false;
  if (is(":") && close_paren != 0) {
    const std::uint32_t colon = tok_.begin;
    next();
    parse_type();
    const std::uint32_t type_end = prev_end_;
    erase(colon, type_end);
    return_type = true;
    // No line may end between `)` and `=>`: if the type spans lines, the
    // `)` moves to the type's last character, on the line of `=>`.
    if (line_break_between(close_paren, type_end)) {
      puts_.push_back({close_paren, ' '});
      put_before(type_end, ')');
    }
  }
  if (!is("=>") || tok_.newline_before) fail();
  next();
  FlagScope arrow(in_generator_, false);  // an arrow is never a generator
  if (is("{")) {
    parse_block();
  } else {
    body_start_ = tok_.begin;
    // In a conditional's true branch, TypeScript takes `(x): T => y` for an
    // arrow with a return type only where a `:` follows it, and carries that
    // rule into concise bodies and false branches: in `c ? x => (x) : y =>
    // y`, `(x) : y => y` is no arrow.
    conditional_branch_ = in_conditional;
    parse_assignment();
  }
  if (in_conditional && return_type && !is(":")) fail();
}

void Parser::parse_binary() {
  const std::uint32_t first_operand = tok_.begin;
  parse_unary();
  // The loosest operator of this chain so far (JavaScript's precedence,
  // binary_precedence): an erased `as` grouped everything before it, so a
  // tighter operator after it would regroup (`a + b as number * 3` is
  // `(a + b) * 3` to TypeScript, `a + b * 3` once erased).
  int loosest = kNoOperator;
  for (;;) {
    if (tok_.kind == Tok::name && !tok_.newline_before && (is_name("as") || is_name("satisfies"))) {
      // `await as T` (`await` a name here): erased, a bare `await` reads as
      // the operator of whatever follows, the next line's `async () => 1`
      // included (found by fuzz_strip_types). Not read.
      if (prev_.kind == Tok::name && (spells(prev_, "await") || spells(prev_, "yield"))) fail();
      const std::uint32_t begin = tok_.begin;
      next();
      parse_type();
      erase(begin, prev_end_);
      as_erased_at_ = begin;
      // `f(x) as T\n<U>\ny`: TypeScript compares the `as` expression, but
      // erased, `f(x)\n<U>\ny` reads again as type arguments of the call
      // (an instantiation expression). Not read at all.
      if (is("<") && would_read_type_arguments()) fail();
      // `-x as number ** 2` erased is `-x ** 2`, which JavaScript refuses (a
      // unary operand may not be the base of `**`): alone before the `as`,
      // a unary operand counts as a `**` chain. Looked at here, not on the
      // path every operand takes.
      const int before =
          loosest == kNoOperator && is_prefix_operator(scan(first_operand)) ? kExponent : loosest;
      if (before != kNoOperator) {
        const int next_precedence = binary_precedence();
        // `**` groups to the right: `a ** b as T ** c` regroups too.
        if (next_precedence > before || (next_precedence == kExponent && before == kExponent)) {
          fail();
        }
      }
      // TypeScript ends the statement before a line starting with `(`, `[`
      // or a template; JavaScript would call or index the value instead.
      if (tok_.newline_before && (is("(") || is("[") || tok_.kind == Tok::template_full ||
                                  tok_.kind == Tok::template_head)) {
        put_before(prev_end_, ';');
      }
      continue;
    }
    // Past a line break `as` and `satisfies` are no operators (TypeScript
    // ends the statement there): `x = y` then `as = 1` are two statements.
    if (tok_.kind == Tok::name && (is_name("as") || is_name("satisfies"))) return;
    if (is(">")) {
      bool assignment = false;
      const int n = joined_greater(assignment);
      if (assignment) return;
      loosest = std::min(loosest, binary_precedence());
      for (int i = 0; i <= n; ++i) next();
      parse_unary();
      continue;
    }
    if (!is_binary_operator()) return;
    loosest = std::min(loosest, binary_precedence());
    const bool less_than = is("<");
    // Erasures after a comparison `<`, anywhere in the statement, are
    // checked by reading the output again (strip_types).
    if (less_than) compared_ = true;
    next();
    FlagScope operand(less_than_operand_, less_than_operand_ || less_than);
    parse_unary();
  }
}

int Parser::binary_precedence() const {
  if (tok_.spells(">")) {  // `>>` and `>>>` arrive as `>` tokens (lexer.hpp)
    const std::string_view s = lexer_.source();
    return tok_.end < s.size() && s[tok_.end] == '>' ? 9 : 8;
  }
  return kTraits.precedence[tok_.id];
}

// How many tokens after the current `>` join it into one operator (`>>`,
// `>>>`, `>=`, `>>=`, `>>>=`), and whether that operator assigns.
int Parser::joined_greater(bool& assignment) const {
  const std::string_view s = lexer_.source();
  std::uint32_t end = tok_.end;
  int greater = 1;
  while (greater < 3 && end < s.size() && s[end] == '>') {
    ++greater;
    ++end;
  }
  assignment = false;
  if (end < s.size() && s[end] == '=' &&
      !(end + 1 < s.size() && (s[end + 1] == '=' || s[end + 1] == '>'))) {
    assignment = greater > 1;
    return greater;  // the `>`s after the first, and the `=`
  }
  return greater - 1;
}

bool Parser::is_assignment_operator() const {
  if (tok_.spells(">")) {
    bool assignment = false;
    joined_greater(assignment);
    return assignment;
  }
  return kTraits.assignment[tok_.id];
}

bool Parser::is_binary_operator() const { return binary_precedence() != 0; }

bool Parser::starts_expression() const {
  switch (tok_.kind) {
    case Tok::name:
      return !is_name("in") && !is_name("instanceof");
    case Tok::eof:
      return false;
    case Tok::punct:
      return kTraits.starts_expression[tok_.id];
    default:
      return true;
  }
}

void Parser::parse_unary() {
  Deeper d(*this);
  if (tok_.kind == Tok::punct) {
    if (is("!") || is("~") || is("+") || is("-") || is("++") || is("--")) {
      next();
      parse_unary();
      return;
    }
    if (is("<")) {  // <T>value
      // After `a < b >`, erasing `<T>` would leave `a < b > (c)`: a call
      // with type arguments when read again; so would erasing it inside
      // the operand of `<` (less_than_operand_). Not read at all. A `>`
      // erased itself (`<T><U>y`, the first assertion's) leaves nothing.
      const bool prev_erased = !erased_.empty() && erased_.back().second == prev_.end;
      if (less_than_operand_ || (prev_.kind == Tok::punct && !prev_erased &&
                                 (spells(prev_, ">") || spells(prev_, "<")))) {
        fail();
      }
      const std::uint32_t begin = tok_.begin;
      const bool restricted =
          prev_.kind == Tok::name &&
          (spells(prev_, "return") || spells(prev_, "throw") || spells(prev_, "yield"));
      next();
      parse_type();
      expect(">");
      erase(begin, prev_end_);
      angle_assertion_at_ = begin;
      // `return <T>\n x` returns x to TypeScript; erased, JavaScript would
      // end the statement at the line break and return nothing. Not read.
      if (restricted && line_break_between(begin, tok_.begin)) fail();
      // Erased, `<T>{...}` starting an arrow's body or a statement would
      // read as a block (and `<T>function` as a declaration).
      if (begin == body_start_ && (is("{") || is_name("function") || is_name("class"))) {
        refuse(begin, "type assertion");
      }
      parse_unary();
      return;
    }
  }
  if (is_name("typeof") || is_name("void") || is_name("delete")) {
    next();
    parse_unary();
    return;
  }
  if (is_name("await")) {
    const Snapshot s = save();
    next();
    if (starts_operand()) {
      parse_unary();
      return;
    }
    restore(s);
  }
  parse_lhs();
  if ((is("++") || is("--")) && !tok_.newline_before) next();
}

void Parser::parse_lhs() {
  if (is_name("new")) {
    parse_new();
  } else {
    parse_primary();
  }
  for (;;) {
    if (is(".")) {
      next();
      if (tok_.kind != Tok::name && tok_.kind != Tok::private_name) fail();
      next();
    } else if (is("?.")) {
      next();
      if (is("(")) {
        parse_arguments();
      } else if (is("[")) {
        next();
        parse_expression();
        expect("]");
      } else if (is("<")) {
        const std::uint32_t at = tok_.begin;
        parse_type_arguments();
        erase(at, prev_end_);
        parse_arguments();
      } else if (tok_.kind == Tok::name || tok_.kind == Tok::private_name) {
        next();
      } else {
        fail();
      }
    } else if (is("[")) {
      next();
      parse_expression();
      expect("]");
    } else if (is("(")) {
      parse_arguments();
    } else if (tok_.kind == Tok::template_full || tok_.kind == Tok::template_head) {
      parse_template();
    } else if (is("!") && !tok_.newline_before) {
      erase_token();
      next();
    } else if (is("<")) {
      if (!try_type_arguments_in_expression()) return;
    } else {
      return;
    }
  }
}

// Lookahead without parsing: whether the `<` here can open type arguments,
// i.e. reaches its `>` before a token no type holds (`;`, `&&`, `=`, an
// unmatched `)`, ...). `i < n;` answers in two tokens instead of an
// exception.
bool Parser::might_be_type_arguments() const {
  int angles = 0;
  int brackets = 0;
  Token t = tok_;
  for (int steps = 0; steps < 4096; ++steps) {
    if (t.kind == Tok::eof) return false;
    if (t.kind == Tok::punct) {
      if (t.spells("<")) {
        ++angles;
      } else if (t.spells(">")) {
        if (--angles == 0 && brackets == 0) return true;
      } else if (kTraits.bracket[t.id] == SpellingTraits::kOpens) {
        ++brackets;
      } else if (kTraits.bracket[t.id] == SpellingTraits::kCloses) {
        if (--brackets < 0) return false;
      } else if (brackets == 0 && !t.spells(",") && !t.spells(".") && !t.spells("|") &&
                 !t.spells("&") && !t.spells("?") && !t.spells(":") && !t.spells("=>") &&
                 !t.spells("-") && !t.spells("...") && !t.spells("!")) {
        return false;  // `;`, `&&`, `=`, `+`, `!`: not in a type outside brackets
      }
    }
    t = scan(t.end);
  }
  return true;  // too long to look through: let the attempt decide
}

bool Parser::type_arguments_fit(std::uint32_t end) const {
  const std::string_view src = lexer_.source();
  // TypeScript rescans the closing `>` first: `>=` and `>>` are operators.
  if (end < src.size() && (src[end] == '=' || src[end] == '>')) return false;
  if (is("(") || tok_.kind == Tok::template_full || tok_.kind == Tok::template_head) return true;
  if (is("<") || is(">") || is("+") || is("-")) return false;
  // `/` and `/=` TypeScript reads as division of the instantiated function
  // (`n<T> / re! / g`), which no program that type-checks divides or assigns
  // to; JavaScript reads a regular expression (`n < T > /re!/g`). Read as
  // JavaScript: plain JavaScript stays as it was.
  if (is("/") || is("/=")) return false;
  return tok_.newline_before || is_binary_operator() || !starts_expression();
}

bool Parser::would_read_type_arguments() {
  if (!might_be_type_arguments()) return false;
  const Snapshot s = save();
  const bool fits = attempt([&] { parse_type_arguments(); }) && type_arguments_fit(prev_end_);
  restore(s);
  return fits;
}

bool Parser::try_type_arguments_in_expression() {
  if (!might_be_type_arguments()) return false;
  const Snapshot s = save();
  const std::uint32_t at = tok_.begin;
  if (!attempt([&] { parse_type_arguments(); })) return false;
  const std::uint32_t end = prev_end_;
  if (!type_arguments_fit(end)) {
    restore(s);
    return false;
  }
  erase(at, end);
  return true;
}

void Parser::parse_new() {
  Deeper d(*this);
  next();         // new
  if (is(".")) {  // new.target
    next();
    expect_name();
    return;
  }
  if (is_name("new")) {
    parse_new();
  } else {
    parse_primary();
  }
  for (;;) {
    if (is(".")) {
      next();
      if (tok_.kind != Tok::name && tok_.kind != Tok::private_name) fail();
      next();
    } else if (is("[")) {
      next();
      parse_expression();
      expect("]");
    } else if (tok_.kind == Tok::template_full || tok_.kind == Tok::template_head) {
      parse_template();
    } else {
      break;
    }
  }
  if (is("<")) try_type_arguments_in_expression();
  if (is("(")) parse_arguments();
}

void Parser::parse_primary() {
  Deeper d(*this);
  switch (tok_.kind) {
    case Tok::name: {
      if (spells(tok_, "function") ||
          (spells(tok_, "async") && peek_is_name("function") && !peek().newline_before)) {
        parse_function(tok_.begin, false);
        return;
      }
      if (spells(tok_, "class")) {
        parse_class();
        return;
      }
      if (is_reserved_word(tok_)) fail();
      // `import` begins an expression only as `import(...)` or `import.meta`.
      if (spells(tok_, "import") && !peek_is("(") && !peek_is(".")) fail();
      next();
      return;
    }
    case Tok::private_name:
    case Tok::number:
    case Tok::string:
    case Tok::template_full:
      next();
      return;
    case Tok::template_head:
      parse_template();
      return;
    case Tok::punct:
      break;
    default:
      fail();
  }
  if (is("@")) refuse(tok_.begin, "decorator");  // @d class {}
  if (is("(")) {
    next();
    parse_expression();
    expect(")");
    return;
  }
  if (is("[")) {
    parse_list("]", true, [&] { parse_assignment(); });
    return;
  }
  if (is("{")) {
    parse_object_literal();
    return;
  }
  if (is("/") || is("/=")) {
    tok_ = lexer_.rescan_regex(tok_);
    next();
    return;
  }
  fail();
}

void Parser::parse_arguments() {
  if (!is("(")) fail();
  // What is erased inside a call's parentheses cannot make a type of what
  // is around them: the arguments start afresh.
  FlagScope arguments(less_than_operand_, false);
  FlagScope compared(compared_, false);
  parse_list(")", false, [&] { parse_assignment(); });
}

void Parser::parse_template() {
  if (tok_.kind == Tok::template_full) {
    next();
    return;
  }
  for (;;) {
    next();  // the head or middle
    parse_expression();
    if (!is("}")) fail();
    tok_ = lexer_.rescan_template(tok_);
    if (tok_.kind == Tok::template_tail) {
      next();
      return;
    }
  }
}

void Parser::parse_object_literal() {
  next();  // {
  while (!is("}")) {
    Deeper d(*this);
    if (is("...")) {
      next();
      parse_assignment();
    } else {
      if ((is_name("get") || is_name("set") || is_name("async")) && modifier_follows(false) &&
          !peek_is("{")) {
        next();
      }
      const bool generator = is("*");
      if (generator) next();
      parse_property_name();
      if (is("<") || is("(")) {
        if (is("<")) erase_type_parameters();
        parse_params();
        if (is(":")) annotation();
        parse_body(generator);
      } else if (is(":") || is("=")) {
        next();
        parse_assignment();
      }
    }
    if (!is("}")) expect(",");
  }
  next();
}

// A modifier keyword is one only if what follows can be a member: a name, a
// string or number key, `[`, `{`, `*`, `...` or a private name.
bool Parser::modifier_follows(bool same_line) const {
  const Token after = peek();
  if (same_line && after.newline_before) return false;
  switch (after.kind) {
    case Tok::name:
    case Tok::string:
    case Tok::number:
    case Tok::private_name:
      return true;
    case Tok::punct: {
      return spells(after, "[") || spells(after, "{") || spells(after, "*") || spells(after, "...");
    }
    default:
      return false;
  }
}

// ---- types ------------------------------------------------------------------

void Parser::parse_type(bool allow_conditional) {
  Deeper d(*this);
  // Function and constructor types.
  if (is("<")) {
    parse_type_parameters();
    parse_params();
    expect("=>");
    parse_type(allow_conditional);
    return;
  }
  if (is_name("new") || (is_name("abstract") && peek_is_name("new"))) {
    if (is_name("abstract")) next();
    next();
    if (is("<")) parse_type_parameters();
    parse_params();
    expect("=>");
    parse_type(allow_conditional);
    return;
  }
  // A function type, unless its first tokens say a parenthesised type
  // (`(A | B)[]`, `(typeof x)[number]`): a failed attempt costs an exception.
  if (is("(") && opens_parameter_list() && attempt([&] {
        parse_params();
        if (!is("=>")) fail();
      })) {
    next();  // =>
    parse_type(allow_conditional);
    return;
  }
  parse_union();
  if (allow_conditional && is_name("extends") && !tok_.newline_before) {
    next();
    parse_type(false);  // the extends type may not itself be conditional
    expect("?");
    parse_type();
    expect(":");
    parse_type();
  }
}

void Parser::parse_union() {
  if (is("|")) next();
  parse_intersection();
  while (is("|")) {
    next();
    parse_intersection();
  }
}

void Parser::parse_intersection() {
  if (is("&")) next();
  parse_type_operator();
  while (is("&")) {
    next();
    parse_type_operator();
  }
}

void Parser::parse_type_operator() {
  Deeper d(*this);
  if (is_name("keyof") || is_name("unique") || is_name("readonly")) {
    const Token after = peek();
    const bool operand = after.kind != Tok::eof && !(after.kind == Tok::punct && [&] {
                           return spells(after, ",") || spells(after, ")") || spells(after, "]") ||
                                  spells(after, ">") || spells(after, ";") || spells(after, "=") ||
                                  spells(after, "|") || spells(after, "&") || spells(after, "}") ||
                                  spells(after, "?") || spells(after, ":") || spells(after, "=>");
                         }());
    if (operand) {
      next();
      parse_type_operator();
      return;
    }
  }
  if (is_name("infer") && peek().kind == Tok::name) {
    next();
    next();
    if (is_name("extends")) {
      attempt([&] {
        next();
        parse_type(false);
        if (is("?")) fail();  // that `extends` began a conditional type
      });
    }
    return;
  }
  parse_postfix_type();
}

void Parser::parse_postfix_type() {
  parse_primary_type();
  for (;;) {
    if (is("[") && !tok_.newline_before) {
      next();
      if (!is("]")) parse_type();
      expect("]");
    } else if (is("!") && !tok_.newline_before) {
      // JSDoc's `T!`, which TypeScript reads in a type (and then reports):
      // read here too, or `f<T!>(x)` would lose its `!`s as non-null
      // assertions and read differently once erased.
      next();
    } else {
      return;
    }
  }
}

void Parser::parse_primary_type() {
  Deeper d(*this);
  switch (tok_.kind) {
    case Tok::name: {
      if (is_name("typeof")) {
        next();
        if (is_name("import")) {
          parse_primary_type();
          return;
        }
        if (tok_.kind != Tok::name && tok_.kind != Tok::private_name) fail();
        next();
        while (is(".")) {
          next();
          if (tok_.kind != Tok::name && tok_.kind != Tok::private_name) fail();
          next();
        }
        if (is("<") && !tok_.newline_before) parse_type_arguments();
        return;
      }
      if (is_name("import") && peek_is("(")) {
        next();
        skip_balanced();
        while (is(".")) {
          next();
          expect_name();
        }
        if (is("<") && !tok_.newline_before) parse_type_arguments();
        return;
      }
      if (is_name("asserts") && !peek().newline_before && peek().kind == Tok::name &&
          !peek_is_name("is")) {
        next();
        next();
        if (is_name("is") && !tok_.newline_before) {
          next();
          parse_type();
        }
        return;
      }
      const bool single = !peek_is(".");
      next();
      while (is(".")) {
        next();
        expect_name();
      }
      if (is("<") && !tok_.newline_before) parse_type_arguments();
      if (single && is_name("is") && !tok_.newline_before) {  // x is T
        next();
        parse_type();
      }
      return;
    }
    case Tok::string:
    case Tok::number:
    case Tok::template_full:
      next();
      return;
    case Tok::template_head:
      parse_template_type();
      return;
    case Tok::punct:
      break;
    default:
      fail();
  }
  if (is("-")) {
    next();
    if (tok_.kind != Tok::number) fail();
    next();
    return;
  }
  if (is("(")) {
    next();
    parse_type();
    expect(")");
    return;
  }
  if (is("[")) {  // a tuple
    next();
    while (!is("]")) {
      Deeper element(*this);
      if (is("...")) next();
      if (is_name()) {  // a name: `[first: string, rest?: number]`
        const Token after = peek();
        const bool named =
            after.kind == Tok::punct && (spells(after, ":") || (spells(after, "?") && [&] {
                                           const Token colon = scan(after.end);
                                           return colon.kind == Tok::punct && spells(colon, ":");
                                         }()));
        if (named) {
          next();
          if (is("?")) next();
          next();  // :
        }
      }
      parse_type();
      if (is("?")) next();
      if (!is("]")) expect(",");
    }
    next();
    return;
  }
  if (is("{")) {  // an object or mapped type
    skip_balanced();
    return;
  }
  fail();
}

void Parser::parse_template_type() {
  for (;;) {
    next();  // the head or middle
    parse_type();
    if (!is("}")) fail();
    tok_ = lexer_.rescan_template(tok_);
    if (tok_.kind == Tok::template_tail) {
      next();
      return;
    }
  }
}

// <A, B<C>>: from `<` to past its `>`. Results are kept by position, so the
// same `<` is read once however often an outer reading is retried.
void Parser::parse_type_arguments() {
  const std::uint32_t at = tok_.begin;
  if (const std::uint32_t* known_end = type_arguments_end_.find(at)) {
    const std::uint32_t end = *known_end;
    if (end == 0) fail();
    // As if read again: the closing `>` is the token before the next.
    prev_ = Token{Tok::punct, Spelling(">").id(), false, end - 1, end};
    prev_end_ = end;
    tok_ = scan(end);
    return;
  }
  try {
    expect("<");
    for (;;) {
      parse_type();
      if (!is(",")) break;
      next();
      if (is(">")) break;
    }
    expect(">");
  } catch (const ParseFail&) {
    type_arguments_end_.set(at, 0);
    throw;
  } catch (const LexError&) {
    type_arguments_end_.set(at, 0);
    throw;
  }
  type_arguments_end_.set(at, prev_end_);
}

// <const T extends U = V, in out W>
void Parser::parse_type_parameters() {
  expect("<");
  while (!is(">")) {
    Deeper d(*this);
    while ((is_name("const") || is_name("in") || is_name("out")) && peek().kind == Tok::name) {
      next();
    }
    expect_name();
    if (is_name("extends")) {
      next();
      parse_type();
    }
    if (is("=")) {
      next();
      parse_type();
    }
    if (!is(">")) expect(",");
  }
  next();
}

// ---- output -----------------------------------------------------------------

std::string Parser::output() const {
  const std::string_view s = lexer_.source();
  // Most erasures cover ASCII only: then every byte is one UTF-16 unit and
  // the output is the source overwritten in place.
  {
    std::string out(s);
    unsigned char high = 0;  // the bytes erased, or-ed: >= 0x80 if any is not ASCII
    for (const auto& [begin, end] : erased_) {
      for (std::uint32_t i = begin; i < end; ++i) {  // no branch per byte
        const char c = out[i];
        high |= static_cast<unsigned char>(c);
        out[i] = c == '\n' || c == '\r' ? c : ' ';
      }
    }
    for (const Put& p : puts_) {
      high |= static_cast<unsigned char>(s[p.at]);
      out[p.at] = p.c;
    }
    if (high < 0x80) return out;
  }
  // Erased characters become as many spaces as their UTF-16 units, so that
  // columns (which V8 counts in UTF-16) stay put. One pass: ASCII bytes are
  // one unit each, and only the other characters are decoded.
  std::vector<std::uint8_t> erased(s.size(), 0);
  for (const auto& [begin, end] : erased_) {
    std::fill(erased.begin() + begin, erased.begin() + end, std::uint8_t{1});
  }
  // By position; of several at one byte the last made wins.
  std::vector<Put> puts = puts_;
  std::stable_sort(puts.begin(), puts.end(),
                   [](const Put& a, const Put& b) { return a.at < b.at; });
  std::size_t next_put = 0;
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const auto at = static_cast<std::uint32_t>(i);
    const core::Utf8Step step =
        static_cast<unsigned char>(s[i]) < 0x80 ? core::Utf8Step{1, true} : core::utf8_step(s, i);
    const std::size_t units = step.valid && step.length == 4 ? 2 : 1;
    // A put on any byte of the character stands for the whole character
    // (the first such byte's, the last put made there).
    while (next_put < puts.size() && puts[next_put].at < at) ++next_put;
    if (next_put < puts.size() && puts[next_put].at < at + step.length) {
      const std::uint32_t first = puts[next_put].at;
      while (next_put + 1 < puts.size() && puts[next_put + 1].at == first) ++next_put;
      out += puts[next_put].c;
      out.append(units - 1, ' ');
    } else if (erased[i] && line_terminator_at(s, at) == 0) {
      out.append(units, ' ');
    } else {
      out.append(s.substr(i, step.length));
    }
    i += step.length;
  }
  return out;
}

// 1-based line and UTF-16 column of byte `at`.
std::pair<std::size_t, std::size_t> line_and_column(std::string_view s, std::uint32_t at) {
  std::size_t line = 1;
  std::size_t column = 1;
  std::uint32_t i = 0;
  while (i < at && i < s.size()) {
    if (const std::uint32_t lt = line_terminator_at(s, i)) {
      ++line;
      column = 1;
      i += lt;
      continue;
    }
    const core::Utf8Step step = core::utf8_step(s, i);
    column += step.valid && step.length == 4 ? 2 : 1;
    i += static_cast<std::uint32_t>(step.length);
  }
  return {line, column};
}

std::string refusal_message(std::string_view construct) {
  const std::string cannot = " is TypeScript that erasing types cannot turn into JavaScript: ";
  if (construct == "enum") {
    return "enum" + cannot +
           "use an object, e.g. `const Color = {Red: \"red\", Blue: \"blue\"} as const;` and "
           "`type Color = (typeof Color)[keyof typeof Color];`";
  }
  if (construct == "namespace") {
    return "namespace holding values" + cannot + "use a const object or plain declarations";
  }
  if (construct == "parameter property") {
    return "parameter property (`constructor(private x: T)`)" + cannot +
           "declare the field (`private x: T;`) and assign it in the constructor";
  }
  if (construct == "decorator") {
    return "decorator" + cannot + "call the function on the class or method instead";
  }
  if (construct == "import =") return "import =" + cannot + "use `const x = ...`";
  if (construct == "type assertion") {
    return "type assertion `<T>` before `{`, `function` or `class` at the start of an arrow's "
           "body or a statement would read as a block or declaration once erased: write "
           "`(value as T)` instead";
  }
  return std::string(construct) + cannot + "return the value instead";
}

}  // namespace

namespace {

// One reading of `source` (strip_types without its check of the output).
StripResult strip_once(std::string_view source, std::uint32_t* erased_in_comparison) {
  StripResult result;
  if (source.size() >= 0xFFFFFFF0u) {
    result.status = StripResult::Status::unchanged;
    result.code = std::string(source);
    result.reason = "source too large to read as TypeScript";
    return result;
  }
  Parser parser(source);
  const auto unchanged = [&](std::uint32_t at, std::string reason) {
    result.status = StripResult::Status::unchanged;
    result.code = std::string(source);
    std::tie(result.line, result.column) = line_and_column(source, at);
    result.reason = std::move(reason);
  };
  try {
    parser.parse_program();
  } catch (const Refused& refused) {
    result.status = StripResult::Status::refused;
    std::tie(result.line, result.column) = line_and_column(source, refused.at);
    result.reason = refusal_message(refused.message);
    return result;
  } catch (const ParseFail&) {
    unchanged(parser.furthest(), "not read as TypeScript past here");
    return result;
  } catch (const LexError& error) {
    unchanged(error.at, "a token that does not end (string, comment, template or regex)");
    return result;
  } catch (const TooDeep&) {
    unchanged(parser.furthest(), "nested too deep to read");
    return result;
  } catch (const TooLong&) {
    unchanged(parser.furthest(), "more re-reading than its length allows");
    return result;
  }
  result.code = parser.output();
  *erased_in_comparison = parser.erased_in_comparison();
  return result;
}

}  // namespace

StripResult strip_types(std::string_view source) {
  std::uint32_t erased_in_comparison = UINT32_MAX;
  StripResult result = strip_once(source, &erased_in_comparison);
  if (result.status != StripResult::Status::stripped || erased_in_comparison == UINT32_MAX) {
    return result;
  }
  // An erasure inside the right operand of a comparison `<` can leave text
  // that reads as type arguments: `a < (b as T) > (c)`, which TypeScript
  // compares, becomes `a < (b     ) > (c)`, a call. The rules above catch
  // the known forms; this catches every form: the output must read back as
  // itself, or the source is not read (it goes to V8 as written). Only
  // sources with such an erasure pay for the second reading.
  std::uint32_t unused = UINT32_MAX;
  const StripResult again = strip_once(result.code, &unused);
  if (again.status == StripResult::Status::stripped && again.code == result.code) return result;
  result.status = StripResult::Status::unchanged;
  result.code = std::string(source);
  std::tie(result.line, result.column) = line_and_column(source, erased_in_comparison);
  result.reason = "a comparison that, its types erased, would read as type arguments";
  return result;
}

}  // namespace corral::sandbox::typescript
