// The TypeScript stripper (src/sandbox/typescript/strip.hpp) on the cases
// that decide its reading: what is erased, what stays, what is refused and
// where columns land. The corpus of whole snippets, compared with the
// TypeScript compiler, is tests/e2e/typescript.test.mjs.
#include "sandbox/typescript/strip.hpp"

#include <gtest/gtest.h>

#include <pthread.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "sandbox/typescript/lexer.hpp"
#include "sandbox/typescript/position_map.hpp"

namespace corral::sandbox::typescript {
namespace {

using Status = StripResult::Status;

// Asserts that `ts` strips to `js` (written with the same columns).
void expect_strip(const std::string& ts, const std::string& js) {
  const StripResult r = strip_types(ts);
  ASSERT_EQ(r.status, Status::stripped) << ts << "\n"
                                        << r.line << ":" << r.column << " " << r.reason;
  EXPECT_EQ(r.code, js) << "from: " << ts;
}

void expect_identity(const std::string& js) { expect_strip(js, js); }

void expect_refused(const std::string& ts, const std::string& construct, std::size_t line) {
  const StripResult r = strip_types(ts);
  ASSERT_EQ(r.status, Status::refused) << ts << "\n" << r.code;
  EXPECT_EQ(r.reason.rfind(construct, 0), 0u) << r.reason;
  EXPECT_EQ(r.line, line) << r.reason;
}

// The stripper's memo map against std::map: set replaces, add keeps, key 0
// and the largest key are keys like any other, and growth loses nothing.
TEST(PositionMap, BehavesAsAMapThroughGrowth) {
  PositionMap map;
  std::map<std::uint32_t, std::uint32_t> reference;
  EXPECT_EQ(map.find(0), nullptr);
  std::mt19937 random(7);
  for (int i = 0; i < 5000; ++i) {
    const std::uint32_t key = i == 0   ? 0u
                              : i == 1 ? 0xFFFFFFFEu
                                       : static_cast<std::uint32_t>(random() % 3000);
    const auto value = static_cast<std::uint32_t>(random());
    if (i % 3 == 0) {
      map.add(key, value);
      reference.emplace(key, value);
    } else {
      map.set(key, value);
      reference[key] = value;
    }
  }
  for (std::uint32_t key = 0; key < 3000; ++key) {
    const std::uint32_t* found = map.find(key);
    const auto it = reference.find(key);
    ASSERT_EQ(found != nullptr, it != reference.end()) << key;
    if (found) {
      EXPECT_EQ(*found, it->second) << key;
    }
  }
  ASSERT_NE(map.find(0xFFFFFFFEu), nullptr);
  EXPECT_EQ(*map.find(0xFFFFFFFEu), reference.at(0xFFFFFFFEu));
}

TEST(TypeScript, AnnotationsBecomeSpaces) {
  expect_strip("let x: number = 1;", "let x         = 1;");
  expect_strip("const f = (a: string, b?: number): string => a;",
               "const f = (a        , b         )         => a;");
  expect_strip("function g<T>(x: T): T { return x; }", "function g   (x   )    { return x; }");
  expect_strip("let y!: string;", "let y         ;");
  expect_strip("try {} catch (e: unknown) {}", "try {} catch (e         ) {}");
}

TEST(TypeScript, ExpressionsLoseTheirTypes) {
  expect_strip("const n = f<string>(x as any)!;", "const n = f        (x       ) ;");
  expect_strip("const c = {a: 1} satisfies Rec;", "const c = {a: 1}              ;");
  expect_strip("const k = [1, 2] as const;", "const k = [1, 2]         ;");
  expect_strip("const m = new Map<string, number>();", "const m = new Map                ();");
  expect_strip("const v = x!.y![0]!;", "const v = x .y [0] ;");
  expect_strip("const g = f<string>;", "const g = f        ;");
  expect_strip("const a = <any>b;", "const a =      b;");
  expect_strip("a?.<T>(1);", "a?.   (1);");
}

TEST(TypeScript, DeclarationsOfTypesAreErasedWhole) {
  // At the start, or after `;` or `{`, nothing can join: only spaces.
  expect_strip("type A = string | number;\nlet a = 1;", "                         \nlet a = 1;");
  expect_strip("f();\ninterface I { a: number; b(): void }\nf();",
               "f();\n                                    \nf();");
  expect_strip("{ declare const codemode: any; }", "{                              }");
  expect_strip("export type { A } from './a';", "                             ");
  expect_strip("import type { A } from './a';", "                             ");
  expect_strip("function f(a: string): void;\nfunction f(a: any) {}",
               "                            \nfunction f(a     ) {}");
  expect_strip("namespace N { export type X = 1; }", "                                  ");
}

TEST(TypeScript, ErasedStatementsCannotJoinTheirNeighbours) {
  // Without the `;`, `b` and `(c)` would become a call.
  expect_strip("let a = b\ntype X = 1\n(c)", "let a = b\n;         \n(c)");
  expect_strip("const a = b as Foo\n(c)", "const a = b      ;\n(c)");
}

TEST(TypeScript, Classes) {
  expect_strip(
      "abstract class A<T> extends B<T> implements I, J {\n"
      "  private readonly x: number = 1;\n"
      "  declare y: string;\n"
      "  z?: T;\n"
      "  [key: string]: any;\n"
      "  abstract m(): void;\n"
      "  public get v(): number { return 1; }\n"
      "  override n<U>(u: U): U { return u; }\n"
      "}",
      "         class A    extends B                    {\n"
      "                   x         = 1;\n"
      "                    \n"
      "  z    ;\n"
      "                     \n"
      "                     \n"
      "         get v()         { return 1; }\n"
      "           n   (u   )    { return u; }\n"
      "}");
}

TEST(TypeScript, AMemberErasedAfterAFieldIsSeparated) {
  expect_strip("class C {\n  x: number\n  [k: string]: any\n}",
               "class C {\n  x       ;\n  ;               \n}");
  // A `}` may end a field's initializer, not only a method (found by a
  // review): without the `;`, JavaScript reads `x = {}['z'] = 1`.
  expect_strip("class A {\n  x = {}\n  declare y: number\n  ['z'] = 1\n}",
               "class A {\n  x = {}\n  ;                \n  ['z'] = 1\n}");
  expect_strip("class A {\n  f = function () {}\n  abstract g(): void\n  *h() {}\n}",
               "class A {\n  f = function () {}\n  ;                 \n  *h() {}\n}");
}

TEST(TypeScript, AFieldAnnotationEndsTheField) {
  // `get` on the next line would otherwise make the field a getter.
  expect_strip("class C {\n  get: number\n  foo() {}\n}",
               "class C {\n  get       ;\n  foo() {}\n}");
}

TEST(TypeScript, TypeAssertionsInARow) {
  expect_strip("x = <T><unknown>y", "x =             y");
  expect_strip("x = <T> <U>(y)", "x =        (y)");
  // After a comparison's `>`, one is still not read.
  EXPECT_EQ(strip_types("a < b > <T>(c)").status, Status::unchanged);
}

// As TypeScript reads them: past a line break no operators, but names
// starting the next statement.
TEST(TypeScript, AsAndSatisfiesStartingALineAreNames) {
  expect_strip("let a: number = 1\nx = y\nas = 1", "let a         = 1\nx = y\nas = 1");
  expect_strip("f()\nsatisfies.b = 2\nx as T", "f()\nsatisfies.b = 2\nx     ");
}

// TypeScript assigns to no `as` expression (a syntax error); erased, the
// assignment would go to its operand. Parenthesised it is a target.
TEST(TypeScript, AnAsExpressionIsNoAssignmentTarget) {
  EXPECT_EQ(strip_types("x = y as T\n= b").status, Status::unchanged);
  EXPECT_EQ(strip_types("y satisfies T += 1").status, Status::unchanged);
  // The same for the `<T>` form (hostile review).
  EXPECT_EQ(strip_types("<T>y = b;").status, Status::unchanged);
  EXPECT_EQ(strip_types("x = <T>y.z ?\?= b;").status, Status::unchanged);
  expect_strip("(<T>y) = b; x = <T>y + 1;", "(   y) = b; x =    y + 1;");
  expect_strip("(y as any) = b", "(y       ) = b");
  expect_strip("y! = b", "y  = b");
}

TEST(TypeScript, ThisParameterGoesWithItsComma) {
  expect_strip("function f(this: Window, a: number) {}", "function f(              a        ) {}");
  // Untyped (tsc drops it too; JavaScript refuses `this` as a name).
  expect_strip("function f(this) {}", "function f(    ) {}");
  expect_strip("function f(this, a) {}", "function f(      a) {}");
  expect_strip("const o = { m(this, b: T) {} }", "const o = { m(      b   ) {} }");
  // Anywhere else it is no parameter (hostile review: `this?` was erased
  // to `this `, then on a second strip to nothing).
  for (const std::string source :
       {"function f(this?) {}", "function f(this?: T) {}", "function f(a, this) {}"}) {
    EXPECT_EQ(strip_types(source).status, Status::unchanged) << source;
  }
}

TEST(TypeScript, AnArrowReturnTypeAcrossLinesKeepsTheArrowLegal) {
  expect_strip("const f = (a): {\n  x: number\n} => a;", "const f = (a    \n           \n) => a;");
}

// No line may end between `async` and an arrow's `(` either: type
// parameters spanning lines move the `(` up to the `<` (found by
// fuzz_strip_types; in place, `async\n(x) => x` is a call of `async`
// followed by a stray `=>`, a SyntaxError).
TEST(TypeScript, AnAsyncArrowsTypeParametersAcrossLinesKeepTheArrowLegal) {
  expect_strip("const f = async <\n  T,\n>(x: T) => x;", "const f = async (\n    \n  x   ) => x;");
  expect_strip("const f = async <T>\n(x: T) => x;", "const f = async (  \n x   ) => x;");
  expect_strip("const f = async <T, // why\n>(x: T): Promise<\nT> => x;",
               "const f = async (         \n  x              \n ) => x;");
  // On one line, or not async, nothing moves.
  expect_strip("const f = async <T>(x: T) => x;", "const f = async    (x   ) => x;");
  expect_strip("const f = <\n  T,\n>(x: T) => x;", "const f =  \n    \n (x   ) => x;");
  // A line break right after `async` is JavaScript's too: not an arrow.
  EXPECT_EQ(strip_types("const f = async\n<T>(x: T) => x;").status, Status::unchanged);
}

// `return <T>\n x` returns x; erased in place, `return` would end at the
// line break (so would `throw`, and `yield` yield nothing). Not read.
TEST(TypeScript, AnAssertionAfterReturnStaysOnItsLine) {
  for (const std::string source :
       {"function f() { return <any>\n x; }", "function f() { throw <Error>\n e; }",
        "function* g() { yield <any>\n x; }", "function f() { return <{\n a: 1 }>x; }"}) {
    EXPECT_EQ(strip_types(source).status, Status::unchanged) << source;
  }
  expect_strip("function f() { return <any>x; }", "function f() { return      x; }");
  expect_strip("x = <any>\n y;", "x =      \n y;");
}

TEST(TypeScript, ConditionalBranchesAreNotArrowReturnTypes) {
  expect_identity("const r = a ? (b) : c => d;");
  expect_strip("const r = a ? (b): string => b : c;", "const r = a ? (b)         => b : c;");
  // The rule reaches into a true branch's concise arrow bodies and into
  // false branches, as in TypeScript (found by a review): `(x) : y => y`
  // below is the parenthesised body, then the false branch.
  expect_identity("const f = flag ? x => (x) : y => y;");
  expect_identity("const toRow = compact ? id => ({ id }) : id => ({ id: -id });");
  expect_strip("const r = a ? c ? d : (x): T => x : e;", "const r = a ? c ? d : (x)    => x : e;");
}

TEST(TypeScript, ComparisonsStayComparisons) {
  expect_identity("if (a < b && c > d) f();");
  expect_identity("const x = a < b > c;");
  expect_identity("const y = a < b >= c;");
  expect_identity("const z = a < b >> c;");
  expect_identity("const w = a < b > -1;");
  expect_identity("x >>>= 1; y >>= 2; z >= 3;");
}

// Found by fuzz_strip_types: erasing `<T>` after `a < b >` left
// `a < b > (c)`, a call with type arguments when read again; so did erasing
// it inside the operand of `<` (`Array.from<[<T>string, number]>(x)` became
// `Array.from<[   string, number]>(x)`), and erasing an instantiation
// expression there (`a < X\n<T> ,b > (c)`, which TypeScript reads as
// `a < (X), b > (c)`, became `a < X\n    ,b > (c)`). Such source is not
// read (V8 then reports it or runs it as JavaScript), so stripping stays
// idempotent.
TEST(TypeScript, AnAssertionAfterAComparisonIsNotErased) {
  for (const std::string source :
       {"a < b > <T>(c);", "const q = sql<T><Row>`select`;", "f<string!!>(\"a\");",
        "a < (<T>b) > (c);", "a < [<T>b] > (c);", "Array.from<[<T>string, number]>(counts);",
        "a < `${<T>b}` > (c);", "a < X\n<T> ,b > (c);", "a < X\n<T>.y, b > (c);"}) {
    const StripResult r = strip_types(source);
    if (r.status == Status::stripped) {
      const StripResult again = strip_types(r.code);
      EXPECT_EQ(again.status, Status::stripped) << source;
      EXPECT_EQ(again.code, r.code) << source;
    } else {
      EXPECT_EQ(r.status, Status::unchanged) << source;
    }
  }
}

// Found by fuzz_strip_types: after an erased `as T`, a `<` that TypeScript
// compares with the `as` expression would open type arguments of what is
// left (`f(x)\n<U>\ny` is an instantiation expression): not read. A `<`
// that cannot open type arguments stays a comparison and is stripped.
TEST(TypeScript, TypeArgumentsAfterAnErasedAsAreNotMadeUp) {
  for (const std::string source : {"f(x) as T\n<U>\ny;", "f(x) as T\n<U>(y);"}) {
    const StripResult r = strip_types(source);
    EXPECT_EQ(r.status, Status::unchanged) << source << " -> " << r.code;
  }
  expect_strip("f(x) as T\n< 3;", "f(x)     \n< 3;");
}

// Found by fuzz_strip_types, in forms no rule listed: an erasure after a
// comparison `<` can leave type arguments (`a < (b as T) > (c)`, compared
// by TypeScript, would become `a < (b     ) > (c)`, a call). Such output
// is read again and must come back as itself, or the source is not read.
TEST(TypeScript, AnErasureInAComparisonMustReadBackAsItself) {
  for (const std::string source :
       {"a < (b as T) > (c);", "X < Y as T\n > (c);", "f < g as T > (\"a\");"}) {
    const StripResult r = strip_types(source);
    EXPECT_EQ(r.status, Status::unchanged) << source << " -> " << r.code;
    EXPECT_EQ(r.code, source);
    EXPECT_EQ(r.reason, "a comparison that, its types erased, would read as type arguments");
  }
  expect_strip("for (let i = 0; i < (items as Item[]).length; i++) f();",
               "for (let i = 0; i < (items          ).length; i++) f();");
  expect_strip("if (n < (x as number)) f();", "if (n < (x          )) f();");
  expect_strip("const ok = a < b as number > c;", "const ok = a < b           > c;");
}

// Found by fuzz_strip_types: a reserved word is no identifier. `namespace`
// before `in` is an expression (its `!`s erased, it read again as a
// declaration), and `<T>export` is no expression at all.
TEST(TypeScript, ReservedWordsAreNotNames) {
  expect_strip("namespace!!in\n\na < b;", "namespace  in\n\na < b;");
  expect_identity("namespace in x;");
  expect_identity("type instanceof T;");
  expect_identity("let in x;");
  expect_identity("declare in x;");
  expect_strip("declare!! in x;", "declare   in x;");
  expect_strip("declare const x: number; declare var y: string;",
               "                                               ");
  EXPECT_EQ(strip_types("<T>\n\nexport << x;").status, Status::unchanged);
  EXPECT_EQ(strip_types("<T>\n\nimport\n\ntype\n").status, Status::unchanged);
  expect_strip("const m = <T>import(\"m\"), u = <U>import.meta.url;",
               "const m =    import(\"m\"), u =    import.meta.url;");
  expect_strip("const o = { default: 1, if: 2 }; o.export = <T>o.in;",
               "const o = { default: 1, if: 2 }; o.export =    o.in;");
}

// From a review: an erased `as` grouped everything before it, so an
// operator after it that binds tighter than one before it would regroup
// once erased (`a + b as number * 3` is `(a + b) * 3`, 9 with a=1, b=2, to
// TypeScript, and 7 as `a + b * 3`): not read. Looser operators, and an
// `as` on one operand, read the same either way.
TEST(TypeScript, AnErasedAsDoesNotRegroupItsOperators) {
  for (const std::string source : {"const r = a + b as number * 3;", "x = a < b as any + c;",
                                   "x = a - b as any ** 2;", "x = a ** b as T ** c;",
                                   // A unary operand is no base for `**`: `-x ** 2`
                                   // is a SyntaxError (found by a review).
                                   "y = -x as number ** 2;", "y = typeof x as any ** 2;"}) {
    EXPECT_EQ(strip_types(source).status, Status::unchanged) << source;
  }
  expect_strip("y = -x as number * 2;", "y = -x           * 2;");
  expect_strip("y = a ** -b as number;", "y = a ** -b          ;");
  expect_strip("x = a * b as number + 3;", "x = a * b           + 3;");
  expect_strip("if (x > y as number && z) f();", "if (x > y           && z) f();");
  expect_strip("const n = count as number * 2;", "const n = count           * 2;");
}

// Type arguments followed by `/` or `/=` (found by fuzz_strip_types):
// TypeScript would divide the instantiated function (`n<T> / re! / g`, and
// erase the `!`), which no program that type-checks does; JavaScript reads a
// regular expression. Read as JavaScript, the source stays as it was.
TEST(TypeScript, TypeArgumentsBeforeASlashAreReadAsComparisons) {
  expect_identity("n<T>/re!/g\net");
  expect_identity("x = a < b > /=c/.test(d);");
  expect_strip("let x = f<T>(a) / 2;", "let x = f   (a) / 2;");
}

// From a review: a comparison earlier in the statement counts too, past
// `,` and `|` (`a < b, c as T > (d)` erased reads as a call); a call's
// arguments start afresh, and an instantiation expression that reads back
// as itself is stripped.
TEST(TypeScript, EveryErasureAfterAComparisonIsReadBack) {
  for (const std::string source : {"x = a < b, c as T > (d);", "f(a < b, c as T > (d));",
                                   "x = a < b | (c as T) > (d);", "x = a < b, X\n<T>, c > (d);"}) {
    const StripResult r = strip_types(source);
    EXPECT_EQ(r.status, Status::unchanged) << source << " -> " << r.code;
  }
  // A statement that ends at a line break joins the next once erased (found
  // by fuzz_strip_types): `a < infer; X<T>, b > (c);` to TypeScript, and
  // `a < infer X, b > (c)` read again, a call.
  EXPECT_EQ(strip_types("a <\ninfer\nX\n<T> ,b > (c);").status, Status::unchanged);
  expect_strip("const ok = n < limit\nconst x: number = 1\n",
               "const ok = n < limit\nconst x         = 1\n");
  expect_strip("const ok = n < limit<number>;", "const ok = n < limit        ;");
  expect_strip("x = items.filter(i => i < 3).map((x: T) => x);",
               "x = items.filter(i => i < 3).map((x   ) => x);");
}

// Only the operand's own expression is held back: inside a call's
// arguments or a function's body an erased assertion cannot make a type of
// the operand, and is erased as anywhere.
TEST(TypeScript, AnAssertionInACallAfterAComparisonIsErased) {
  EXPECT_EQ(strip_types("if (n < items.map(i => <Item>i).length) f();").code,
            "if (n < items.map(i =>       i).length) f();");
  EXPECT_EQ(strip_types("if (n < g(function () { return <T>x; })) f();").code,
            "if (n < g(function () { return    x; })) f();");
  // A call's type arguments there are erased too: what they leave is a call.
  EXPECT_EQ(strip_types("a < X\n<T>(c), b > (d);").code, "a < X\n   (c), b > (d);");
}

// Found by fuzz_strip_types (its oracle, not the stripper, was wrong): a
// call's type arguments may span any white space or line terminator, U+2028
// and NBSP as `\n`; TypeScript compiles each of these to `a(c);`.
TEST(TypeScript, TypeArgumentsMaySpanUnicodeSpaces) {
  expect_strip("a < \nb > (c);", "a   \n    (c);");
  expect_strip("a < \u2028b > (c);", "a   \u2028    (c);");
  // An erased NBSP is one space: one UTF-16 unit, as it was.
  expect_strip("a < \u00a0b > (c);", "a        (c);");
}

// Found by a hostile review (issue 18): each read as TypeScript reads it.
TEST(TypeScript, ReviewFindings) {
  // `yield` is a name outside generators: `yield < b > c` compares.
  expect_identity("var r = yield < 2 > 1;");
  expect_identity("yield <b> c;");
  expect_strip("function* g() { yield <number>1; }", "function* g() { yield         1; }");
  // `type as x` imports a value called type; `type as as x` a type.
  expect_identity("import { type as t } from 'm';");
  expect_strip("import { type as as t, b } from 'm';", "import {               b } from 'm';");
  // `type as` is a type called as; `type as as` the value type, named as
  // (as the TypeScript compiler reads both).
  expect_strip("import { type as } from 'm';", "import {         } from 'm';");
  expect_strip("import { type as, b } from 'm';", "import {          b } from 'm';");
  expect_strip("let as = 1; export { type as };", "let as = 1; export {         };");
  expect_identity("import { type as as } from 'm';");
  expect_identity("import { type as as, b } from 'm';");
  // A declared class's header may hold braces before its body.
  expect_strip("declare class A extends B<{ a: number }> { x: number }",
               "                                                      ");
  // An arrow's return type may start on the next line.
  expect_strip("const f = (a: number)\n  : string => String(a);",
               "const f = (a         \n         ) => String(a);");
  // A namespace holding a declared value holds a value.
  expect_refused("namespace N { export declare const x: number }", "namespace", 1);
}

TEST(TypeScript, PlainJavaScriptIsUnchanged) {
  expect_identity(
      "async () => {\n"
      "  const re = /a<b>c/g, t = `x${a ? {b: 1} : [2]}y`;\n"
      "  label: for (const [k, v] of Object.entries(o)) { if (k) continue label; }\n"
      "  const {a, b: [c = 1, ...d], ...e} = obj;\n"
      "  class K extends Base { static #p = 1; static { this.q = 2; } get x() { return 1 } }\n"
      "  return a / b / c + (await codemode.run({x: 1}))?.y ?? z;\n"
      "}");
  expect_identity("const type = 1, declare = 2, abstract = 3; type + declare;");
  expect_identity("x = y\n/re/g.test(s)");
}

TEST(TypeScript, ColumnsCountUtf16Units) {
  // "é" is one unit and two bytes; "😀" two units and four bytes.
  expect_strip("let a: \"é😀\" = 1;", "let a        = 1;");
}

// Found by fuzz_strip_types: the `;` that keeps the next line from calling
// an erased `as` expression goes in place of the type's last character. It
// was found by walking back over continuation bytes, which went past
// invalid ones (each its own character, as V8 decodes it) onto the line
// break before: a line was lost.
TEST(TypeScript, ASeparatorAfterAnErasedTypeKeepsEveryLine) {
  expect_strip("f(\"a\") as \n\nX\n(x);", "f(\"a\")    \n\n;\n(x);");
  expect_strip("f(\"a\") as \n\n\x90\x90\n(x);", "f(\"a\")    \n\n ;\n(x);");
  expect_strip("f(\"a\") as \n\nX😀\n(x);", "f(\"a\")    \n\n ; \n(x);");
}

TEST(TypeScript, NonErasableSyntaxIsRefused) {
  expect_refused("enum Color { Red }", "enum", 1);
  expect_refused("let a = 1;\nconst enum E { A }", "enum", 2);
  expect_refused("namespace N { export const x = 1; }", "namespace", 1);
  expect_refused("class A {\n  constructor(private x: number) {}\n}", "parameter property", 2);
  expect_refused("@sealed class A {}", "decorator", 1);
  expect_refused("import fs = require('fs');", "import =", 1);
  expect_refused("export = x;", "export =", 1);
}

TEST(TypeScript, DeclaredEnumsAndNamespacesAreErased) {
  expect_strip("declare enum E { A }", "                    ");
  expect_strip("declare namespace N { const x: number; }",
               "                                        ");
}

// `abstract` then a line break is an expression to TypeScript: what is
// exported is the value of `abstract`, and the class stands alone (hostile
// review: the class was exported instead, silently).
TEST(TypeScript, ExportDefaultAbstractThenALineBreakExportsTheName) {
  expect_identity("export default abstract\nclass C {}");
  expect_strip("export default abstract class C { abstract m(): void }",
               "export default          class C {                    }");
}

// Every known spelling scans as itself (its id), and what merely looks like
// one (longer, shorter, past its first 8 bytes, another case, an escape, in
// quotes) as no known spelling: the reader tells tokens apart by these ids.
TEST(TypeScript, TokensCarryTheIdOfTheirSpellingAndNoOther) {
  using corral::sandbox::typescript::kKnownSpellings;
  using corral::sandbox::typescript::Lexer;
  for (std::size_t i = 0; i < std::size(kKnownSpellings); ++i) {
    const std::string text(kKnownSpellings[i]);
    const auto token = Lexer(text).scan(0);
    EXPECT_EQ(token.id, i + 1) << text;
    EXPECT_EQ(token.end, text.size()) << text;
  }
  for (const std::string text :
       {"interfaces", "interfac", "implementz", "instanceOf", "instanceofx", "constructors",
        "satisfie", "As", "typ\\u0065", "asx", "x", "_", "$", "\"in\"", "`in`", "1", "#in",
        "protectedd", "undefine"}) {
    const auto token = Lexer(text).scan(0);
    EXPECT_EQ(token.id, 0) << text;
  }
  // A megabyte-long name that begins as a long keyword is a name: its
  // annotation is erased, nothing read as `interface` or `instanceof`.
  for (const std::string head : {"interface", "instanceof", "implements"}) {
    const std::string name = head + std::string(1 << 20, 'x');
    const StripResult r = strip_types("let " + name + ": number = 1;");
    ASSERT_EQ(r.status, Status::stripped) << r.reason;
    EXPECT_EQ(r.code, "let " + name + "         = 1;");
  }
  // Ids survive no rescan: a regular expression or a template's rest is
  // no punctuator.
  const Lexer lexer("/in/ }x`");
  EXPECT_EQ(lexer.rescan_regex(lexer.scan(0)).id, 0);
  EXPECT_EQ(lexer.rescan_template(lexer.scan(5)).id, 0);
}

TEST(TypeScript, WhatItCannotReadComesBackUnchanged) {
  // `export` then an expression is no statement (found by fuzz_strip_types:
  // its `!` erased, `export type!* Fr.o` read again as `export type *`).
  for (const std::string source :
       {"let x = ;", "'unterminated", "a b c", "`${", "export type!* Fr.o ;", "export x!;",
        "export async\nfunction f() {}",
        // A contextual keyword declares only with the next token on its
        // line (fuzz_strip_types: `export type` was read as an expression).
        "export type\nexport type * as A from 'a';", "export declare\nconst x = 1;",
        "export abstract\nclass C {}",
        // Erased, the bare `await` would take the next line as its operand
        // (fuzz_strip_types).
        "aw = await as R\nasync () => 1"}) {
    const StripResult r = strip_types(source);
    EXPECT_EQ(r.status, Status::unchanged) << source;
    EXPECT_EQ(r.code, source);
    EXPECT_GE(r.line, 1u);
  }
  expect_strip("export declare const x: number;\nexport type T = 1;\nexport const y = 1;",
               "                               \n                  \nexport const y = 1;");
}

TEST(TypeScript, DeepNestingComesBackUnchangedNotACrash) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const StripResult r = strip_types(deep);
  EXPECT_EQ(r.status, Status::unchanged);
  EXPECT_NE(r.reason.find("nested too deep"), std::string::npos) << r.reason;
}

// The reader bounds the stack it uses, not only its depth: on a 512 KiB
// thread (an embedder's), deep source of every kind comes back unchanged.
TEST(TypeScript, DeepNestingFitsASmallThreadStack) {
  std::vector<std::string> sources;
  const int n = 2000;
  sources.push_back("x = " + std::string(n, '[') + std::string(n, ']'));
  sources.push_back("x = " + std::string(n, '(') + "1" + std::string(n, ')'));
  std::string types = "let x: ", calls = "x = ", blocks, functions = "type T = ";
  for (int i = 0; i < n; ++i) {
    types += "A<";
    calls += "f(() => ";
    blocks += "if (a) {";
    functions += "(a: ";
  }
  sources.push_back(types + "B" + std::string(n, '>'));
  sources.push_back(calls + "1" + std::string(n, ')'));
  sources.push_back(blocks + std::string(n, '}'));
  for (int i = 0; i < n; ++i) functions += ") => void";
  sources.push_back(functions);
  struct Work {
    std::vector<std::string>* sources;
    std::vector<StripResult> results;
  } work{&sources, {}};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 512 * 1024 * CORRAL_STRIP_STACK_SCALE);
  pthread_t thread;
  ASSERT_EQ(pthread_create(
                &thread, &attr,
                [](void* arg) -> void* {
                  auto* w = static_cast<Work*>(arg);
                  for (const std::string& s : *w->sources) w->results.push_back(strip_types(s));
                  return nullptr;
                },
                &work),
            0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  ASSERT_EQ(work.results.size(), sources.size());
  for (std::size_t i = 0; i < sources.size(); ++i) {
    EXPECT_EQ(work.results[i].status, Status::unchanged) << i;
    EXPECT_EQ(work.results[i].code, sources[i]);
  }
  // Nesting as code has it is read (under ASan too, whose frames are larger).
  EXPECT_EQ(strip_types("x = " + std::string(40, '[') + std::string(40, ']')).status,
            Status::stripped);
}

// Megabytes of source shaped to make a reader backtrack (parentheses that
// may open arrows, `<` that may open type arguments, unclosed unions) are
// read or handed back whole, never cut, and the reader is fine afterwards.
TEST(TypeScript, LargeHostileSourcesEndWhole) {
  std::string parens, angles, unions = "let u: A", arrows, comparisons = "x = ";
  // 100,000 erasures after a comparison: each is read twice (the read-back),
  // the whole still linear and stripped.
  std::string read_back = "x = a < b";
  // One async arrow whose type parameters span 100,000 lines (its `(` moves
  // up to the `<`), and 100,000 statements ended at line breaks after one
  // comparison (the comparison counts for each next one: all read twice).
  std::string wrapped = "const f = async <\n", no_semicolons = "x = a < b\n";
  for (int i = 0; i < 100000; ++i) {
    wrapped += "  T" + std::to_string(i) + ",\n";
    no_semicolons += "y = c!\n";
    parens += "(a, b, (c));";
    angles += "a<b,";
    unions += " | B";
    arrows += "const f = (x: number, y?: string): number => x;\n";
    comparisons += "a < b(c) < ";  // each `<` an operand held back from assertions
    read_back += ", c as T";
  }
  comparisons += "<T>d;";
  read_back += ";";
  wrapped += ">(x: T0) => x;";
  for (const std::string& source :
       {parens, angles, unions, arrows, comparisons, read_back, wrapped, no_semicolons}) {
    const StripResult r = strip_types(source);
    EXPECT_NE(r.status, Status::refused);
    EXPECT_EQ(r.code.size(), source.size());
  }
  expect_strip("let n: number = 1;", "let n         = 1;");
  // The assertion at the end of 200,000 comparisons is not read: the whole
  // comes back as it was.
  EXPECT_EQ(strip_types(comparisons).status, Status::unchanged);
  const StripResult read = strip_types(read_back);
  EXPECT_EQ(read.status, Status::stripped);
  EXPECT_EQ(read.code.find("as"), std::string::npos);
  const StripResult moved = strip_types(wrapped);
  ASSERT_EQ(moved.status, Status::stripped) << moved.reason;
  EXPECT_EQ(moved.code.rfind("const f = async (\n", 0), 0u);
  EXPECT_EQ(moved.code.find('<'), std::string::npos);
  const StripResult joined = strip_types(no_semicolons);
  ASSERT_EQ(joined.status, Status::stripped) << joined.reason;
  EXPECT_EQ(joined.code.find('!'), std::string::npos);
  // 200,000 erasures over non-ASCII text: each character erased becomes as
  // many spaces as its UTF-16 units (the output built in one pass).
  std::string non_ascii, non_ascii_erased;
  for (int i = 0; i < 100000; ++i) {
    non_ascii += "let a: \"\u00e9\U0001F600\" = 1 as \"\u00fc\";\n";
    non_ascii_erased += "let a        = 1       ;\n";
  }
  const StripResult wide = strip_types(non_ascii);
  ASSERT_EQ(wide.status, Status::stripped) << wide.reason;
  // Not EXPECT_EQ: on a mismatch gtest would diff two 3 MB strings.
  EXPECT_TRUE(wide.code == non_ascii_erased) << wide.code.substr(0, 80);
}

}  // namespace
}  // namespace corral::sandbox::typescript
