// The TypeScript type stripper (src/sandbox/typescript/, the test binary
// corral_strip_types) on systematically generated combinations, with the
// `typescript` npm compiler as the oracle, as in typescript.test.mjs. The
// corpus there holds what models write; this holds what they might write
// next to each other: every pair of statements from two lists, written
// without semicolons (prettier's `semi: false`), where the second line
// starts with a token that could continue the first in JavaScript, so that
// erasing a statement whole, or the type that ends one, must leave a `;`;
// every pair of class members, and triples where an erased member sits
// between two that would join; and expression forms (`as`, `satisfies`,
// `!`, `f<T>(x)`, typed arrows, `a ? (b): c => d`) in ten positions.
// About 4,500 combinations, each stripped twice (the stripper takes one
// file per process): about 30 s on two cores, most of it the compiler's
// emit.
//
//   cd tests/e2e && CORRAL_STRIP_TYPES=.../corral_strip_types node --test typescript_combinations.test.mjs
//
// Nothing is random: the same lists give the same combinations, named by
// group and number. For each one the stripper either
//   - accepts it (exit 0): the output keeps the layout (the rule of
//     typescript.test.mjs), is JavaScript (the compiler's parser, V8), means
//     what the compiler's own type erasure of the input means (the emit of
//     both, normalised, as in typescript.test.mjs), and stripping it again
//     gives it back (a stripped program is plain JavaScript);
//   - or refuses it (exit 2) or declines to read it (exit 3), which is right
//     only where the compiler reports a syntax or grammar error, or where
//     docs/sandbox.md ("TypeScript") says it refuses or does not read the
//     construct. Other refusals fail, unless allow-listed below.
// A combination the compiler reports a syntax error for has no meaning to
// compare: whatever the stripper does with it is counted, not judged (but
// for a crash). The counts show as diagnostics (`# statements: {...}`).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import ts from 'typescript';
import { describe, emit, isModule, lines, parse, program, v8ScriptProblem } from './typescript_oracle.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const stripper = process.env.CORRAL_STRIP_TYPES
  ?? path.join(root, 'build/test/tests/sandbox/corral_strip_types');

// ---------------------------------------------------------------------------
// The combinations.

const indent = (text, by) => text.split('\n').map((line) => (line === '' ? line : ' '.repeat(by) + line)).join('\n');

// (a) Statements. A combination is a line that could be continued (or
// none), a first statement and a second one that starts with a token that
// could continue the first, in one of a few places statements go.
const statementPrefixes = ['', 'foo()', 'x = [1]', 'x = y', 'x = `y`', "x = 'y'", 'x = y as T', 'x = {}'];

// `top`: only at the top level of a module (import/export, ambient
// declarations, namespaces), where the compiler takes them.
const firstStatements = [
  // Erased whole.
  { text: 'type A = number' },
  { text: 'type F = (a: string) => void' },
  { text: "type U = 'a' | 'b'" },
  { text: 'type G<T> = T[]' },
  { text: 'type O = { a: number }' },
  { text: 'type Tpl = `a${string}`' },
  { text: 'interface I { a: number }' },
  { text: 'interface J extends I {\n  b(): void\n}' },
  { text: 'type A = 1\ninterface I {}' },
  { text: 'declare const d: number', top: true },
  { text: 'declare let e: string[]', top: true },
  { text: 'declare function df(a: number): void', top: true },
  { text: 'declare class DC { m(): void }', top: true },
  { text: 'declare enum DE { A }', top: true },
  { text: 'declare namespace DN { const v: number }', top: true },
  { text: "declare module 'm' { export const v: number }", top: true },
  { text: 'declare global { var g: number }', top: true },
  { text: 'namespace NS { export type T = number }', top: true },
  { text: "import type { T } from 'm'", top: true },
  { text: "import type D from 'm'", top: true },
  { text: 'export type { T }', top: true },
  { text: 'export type E2 = number', top: true },
  { text: 'export interface EI {}', top: true },
  { text: 'export declare const ed: number', top: true },
  { text: 'function ov(a: string): void' },
  { text: 'function ov(a: string): void\nfunction ov(a: any) {}' },
  // Erased in part, ending in a type.
  { text: 'let a: number' },
  { text: 'let a: T, b: U' },
  { text: 'let a!: number' },
  { text: 'let w: { a: 1 }' },
  { text: 'let z: [number]' },
  { text: 'let q: (a: T) => U' },
  { text: "let u: 'lit'" },
  { text: 'let tt: `a${string}`' },
  { text: 'let v: Array<number>' },
  { text: 'const c = y as T' },
  { text: 'const c = [y] as const' },
  { text: 'const c = y satisfies T' },
  { text: 'x = y as T[]' },
  { text: 'x = y as { a: 1 }' },
  { text: 'x = y as (T)' },
  { text: "x = y as 'lit'" },
  { text: 'x = y as `t`' },
  { text: 'x = y as () => void' },
  { text: 'x = y as typeof z' },
  { text: 'x = y as T<U>' },
  { text: 'x = y as unknown as T' },
  { text: 'x = y satisfies T as U' },
  { text: 'x = y as T | U' },
  { text: 'x = a ? b : c as T' },
  { text: 'const fb = () => x as T' },
  { text: 'x = f<T>' },
  { text: 'x = o.f<T, U>' },
  // Erased in part, ending in JavaScript.
  { text: 'x = y!' },
  { text: 'x = y! as T' },
  { text: 'f(a as T)' },
  { text: 'a[b!]' },
  { text: 'x = { a: b as T }' },
  { text: 'x = f<T>(y)' },
  { text: 'x = `t${y as T}`' },
  { text: "x = 'a' as const" },
  { text: 'let o = { a: 1 } as const' },
  { text: 'const fa = (x: number): number => x' },
  { text: 'const g = <T,>(x: T): T => x' },
  { text: 'const h = async <T,>(x: T): Promise<T> => x' },
  { text: 'let fe = function (a: number): void {}' },
  { text: "function fn(a?: number): string { return '' }" },
  { text: 'function fg<T>(this: W, a: T): a is T { return true }' },
  { text: 'class K<T> implements I { x!: T }' },
  { text: 'abstract class AC {}' },
  { text: 'class K2 extends Base<string> {}' },
  { text: 'if (a as boolean) b' },
  { text: 'for (const k of ks as string[]) k' },
  // Plain JavaScript, for comparison: the stripper must leave these alone.
  { text: 'f(a)' },
  { text: 'x = [y]' },
  { text: "x = 'y'" },
  { text: 'x = `y`' },
];

// Tokens a line can start with that continue the line before it in
// JavaScript (`(`, `[`, a template, binary operators, `.`, a regular
// expression read as division), that continue a type in TypeScript (`|`,
// `&`, `.`), that would continue it in TypeScript on the same line but not
// after a line break (`as`, `satisfies`: here variables of that name), and
// a few that continue nothing, for contrast.
const secondStatements = [
  '(b)', '(b as T)', '[b]', '`t`', '`t${b}`', '+b', '-b', '/re/.test(s)', '.b', '?.b', '!b', '++b', '= b',
  '&& b', '| b', '& b', 'in b', '? b : c', '< b', '<T,>(b: T): T => b', 'as', 'satisfies = b', 'b', '{ b }',
];

const statementContexts = [
  (body) => body,
  (body) => `function outer() {\n${indent(body, 2)}\n}`,
  (body) => `async () => {\n${indent(body, 2)}\n}`,
  (body) => `class Outer {\n  static {\n${indent(body, 4)}\n  }\n}`,
];

function statementCombinations() {
  const combos = [];
  firstStatements.forEach((first, i) => {
    secondStatements.forEach((second, j) => {
      // Every first meets every second; the prefix and the place rotate so
      // that every prefix meets every first and every second too.
      const prefix = statementPrefixes[(i + j) % statementPrefixes.length];
      const context = first.top ? statementContexts[0] : statementContexts[(3 * i + j) % statementContexts.length];
      const body = [prefix, first.text, second].filter((s) => s !== '').join('\n');
      combos.push(`${context(body)}\n`);
    });
  });
  return combos;
}

// (b) Class members, two spaces in, no semicolons. `abstract` members need
// an abstract class; every class extends Base so that `override` and
// `super()` are valid.
const classMembers = [
  { text: 'a = 1' },
  { text: 'a = f()' },
  { text: 'a = [1]' },
  { text: 'a = b' },
  { text: 'a = `x`' },
  { text: 'a: number = g()' },
  { text: 'a = {} as T' },
  { text: 'a = b!' },
  { text: 'a = f<T>' },
  { text: 'a: number' },
  { text: 'a!: string[]' },
  { text: 'a: { b: 1 }' },
  { text: 'declare a: string' },
  { text: '[key: string]: unknown' },
  { text: 'static [key: string]: unknown' },
  { text: 'private a = 1' },
  { text: 'protected readonly b: T' },
  { text: 'static override readonly x = 1' },
  { text: 'abstract m(): void', abstract: true },
  { text: 'abstract a: number', abstract: true },
  { text: 'm(x: string): void' },
  { text: 'm(x: string): void\nm(x: any) {}' },
  { text: 'm?(): void' },
  { text: 'n?() {}' },
  { text: "['x'] = 1" },
  { text: '[k]: T = v' },
  { text: 'static { this.x = 1 }' },
  { text: 'get g(): number { return 1 }' },
  { text: 'static: number' },
  { text: 'get: number' },
  { text: 'declare: number' },
  // `once`: twice in a class is an error of its own (V8 refuses a second
  // constructor or #p), so never paired with itself.
  { text: '#p: number = 1', once: true },
  { text: 'override m(): void {}' },
  { text: '*g() {}' },
  { text: 'constructor(a: number) { super() }', once: true },
  { text: 'y = (a: T): U => a' },
];

// For the triples: members whose end a next line could continue, members
// erased whole, and members that start with something that continues
// (`[`, `*`) or that a bare `static`/`get` before them would modify.
const continuableMembers = ['a = 1', 'a = f()', 'a = [1]', 'a = b', 'a = `x`', 'a = {}', 'static', 'get'];
const erasedMembers = [
  { text: 'declare x: T' },
  { text: '[key: string]: unknown' },
  { text: 'static [k: string]: T' },
  { text: 'm(x: string): void' },
  { text: 'abstract m(): void', abstract: true },
  { text: 'abstract a: number', abstract: true },
  { text: 'm?(): void' },
  { text: 'declare static y: U' },
  { text: 'private declare z: V' },
  { text: 'protected abstract get g(): number', abstract: true },
];
const continuingMembers = ["['x'] = 1", '[k]: T = v', '*g() {}', 'x = 1', "'s' = 1", 'get g() { return 1 }'];

const classHeaders = [
  { open: 'class C extends Base {', close: '}' },
  { open: 'const K = class extends Base {', close: '}' },
  { open: 'export class E extends Base {', close: '}' },
  { open: 'x = class<T> extends Base<T> implements I {', close: '}' },
];
const abstractHeader = { open: 'abstract class C extends Base {', close: '}' };

function classCombination(members, n) {
  const header = members.some((m) => m.abstract) ? abstractHeader : classHeaders[n % classHeaders.length];
  return `${header.open}\n${members.map((m) => indent(m.text, 2)).join('\n')}\n${header.close}\n`;
}

function classCombinations() {
  const combos = [];
  for (const first of classMembers) {
    for (const second of classMembers) {
      if (first !== second || !first.once) combos.push(classCombination([first, second], combos.length));
    }
  }
  for (const before of continuableMembers) {
    for (const erased of erasedMembers) {
      for (const next of continuingMembers) {
        combos.push(classCombination([{ text: before }, erased, { text: next }], combos.length));
      }
    }
  }
  return combos;
}

// (c) Expressions, each in every position of a list.
const expressions = [
  'y as T', "'y' as const", 'y as unknown as T', 'y satisfies T', 'y satisfies T as U', 'y!', 'y!.z', 'y![0]',
  'y!()', 'a?.b!.c', 'a!?.b', 'y as T[]', 'y as T | U', 'y as T extends U ? V : W', 'y as keyof T',
  'y as T[K]', 'y as { a: 1 }', 'y as [T]', "y as 'lit'", 'y as `t${string}`', 'y as () => void',
  'y as new () => T', 'y as readonly T[]', "y as import('m').T", 'y as T<U<V>>', 'y as T<U<V<W>>>',
  '(y as T).z', '(y satisfies T)[0]', 'y! + 1', 'y as number + 1', 'y as any as T',
  'f<T>(x)', 'f<T, U>(x)', 'f<T<U>>(x)', 'f<T<U<V>>>(x)', 'new C<T>(x)', 'new C<T>', 'f<T>', 'o.m<T>(x)',
  'o?.m<T>(x)', 'f<T>`tpl`', 'f<T>(x)<U>(y)', 'f < T > (x)',
  '(x: number): number => x', '(x?: number) => x', 'async (x: T): Promise<T> => x', '<T,>(x: T) => x',
  '<T extends U>(x: T): x is T => true', '(a = 1 as number) => a', '({ a }: { a: T }) => a',
  '([a]: [T]) => a', '(...r: T[]) => r', '(this: W) => 1', 'function (this: W, a?: T): void {}',
  'function* <T>(a: T): Generator<T> {}', 'class<T> implements I { x?: T }',
  'a ? (b): c => d', 'a ? (b): T => d : e', 'a ? (b) : c', 'a ? (x): x is string => true : z',
  'a ? async (b): Promise<T> => d : e', 'a ? (b) => c : d', 'a ? (b = 1): c => d', 'a ? ({ b }): c => d',
  'a ? ([b]): c => d', 'a ? (b: T): c => d : e', 'a ? (b): (c): T => d : e', 'a ? b : (c): T => d',
  'a ? (b): c => d : (e): f => g', 'a ? (b) ? (c): d => e : f : g', 'a ? (b as T) : c',
  'a ? b! : c as T', 'a ? (b): c => d as T', 'a ? (b): c => (d): e => f : g', 'a ? (b, c): d => e : f',
  'a ? (b): c | d => e : f', 'a ? (b) : c ? (d): e => f : g', 'a ? async (b) : c', 'a ? (b): Promise<c> => d : e',
  'a ? (b): { c: d } => e : f', 'a ? (b = c ? (d): e => f : g): h => i : j', 'a ? (b): b is c => d : e',
  'a as b ? c : d',
  'i < (items as Item[]).length', '(x as T) < y', 'a < (b as T) > (c)', 'a + b as number * 3',
  '(a + b as number) * 3', '-x as number ** 2', '<T>y', '<T>(y)', '<T><unknown>y',
];

// `E` stands for the expression. Where an expression starting with
// `function`, `class` or `{` cannot stand, the compiler says so: counted.
const expressionContexts = [
  'x = E', 'f(E)', '({ k: E })', '`${E}`', 'c ? E : d', '() => E', 'function r() {\n  return E\n}', 'E',
  'x = E\n(b)', 'x = E\n[b]',
];

function expressionCombinations() {
  const combos = [];
  for (const expression of expressions) {
    for (const context of expressionContexts) combos.push(`${context.replace('E', () => expression)}\n`);
  }
  return combos;
}

// ---------------------------------------------------------------------------
// The oracle: the layout rule is that of typescript.test.mjs (keep them in
// step); the compiler's emit and its normalisation are shared with it
// (typescript_oracle.mjs).

// ECMAScript's line terminators: the stripper keeps every one of them, and
// every line keeps its length in UTF-16 code units.
const lineBreaks = /\r\n|\r|\n|\u2028|\u2029/g;

// Programs of these files treat every file as a module, as the emit does.
const moduleProgram = (files) => program(files, { moduleDetection: ts.ModuleDetectionKind.Force });

// The checker's grammar errors (TS1xxx, TS17xxx), not type errors: the
// combinations use names they never declare.
const grammar = (d) => d.code < 2000 || (d.code >= 17000 && d.code < 18000);

function compilerErrors(text) {
  const sf = parse('snippet.ts', text, ts.ScriptKind.TS);
  const syntax = sf.parseDiagnostics.map((d) => describe(sf, d));
  if (syntax.length > 0) return syntax;
  const p = moduleProgram({ '/snippet.ts': text });
  const checked = p.getSourceFile('/snippet.ts');
  return p.getSemanticDiagnostics(checked).filter(grammar).map((d) => describe(checked, d));
}

// The printer keeps some of the line breaks of what it prints (`y!\n.b`
// prints `y.b`, the stripped `y \n.b` prints `y\n    .b`), which mean
// nothing in printed code, where every statement ends in `;`. Where two
// emits differ as text, they are compared as trees: every token, and how the
// parser nests them, without the whitespace between.
function shape(code) {
  const sf = parse('emit.ts', code, ts.ScriptKind.TS);
  const out = [];
  const visit = (node) => {
    const children = node.getChildren(sf);
    if (children.length === 0) {
      out.push(node.getText(sf));
      return;
    }
    out.push(`${ts.SyntaxKind[node.kind]}(`);
    children.forEach(visit);
    out.push(')');
  };
  visit(sf);
  return out.join(' ');
}
const sameMeaning = (expected, actual) => expected === actual || shape(expected) === shape(actual);

// Same lines, same line terminators, same lengths; only spaces, `;`, `)`
// and `(` where the input had something else. The first breach, or null.
function layoutProblem(input, output) {
  const inLines = lines(input);
  const outLines = lines(output);
  if (outLines.length !== inLines.length) return `line count: ${outLines.length}, not ${inLines.length}`;
  if (String(output.match(lineBreaks)) !== String(input.match(lineBreaks))) return 'line terminators differ';
  for (let i = 0; i < inLines.length; ++i) {
    const [line, o] = [inLines[i], outLines[i]];
    if (o.length !== line.length) return `line ${i + 1} length: ${o.length}, not ${line.length}`;
    for (let j = 0; j < o.length; ++j) {
      if (o[j] === line[j] || o[j] === ' ' || o[j] === ';' || o[j] === ')' || o[j] === '(') continue;
      return `line ${i + 1} column ${j + 1}: wrote ${JSON.stringify(o[j])} over ${JSON.stringify(line[j])}`;
    }
  }
  return null;
}


// The emit with moduleDetection force ends in `export {};` where the input
// had no module syntax: a script for V8 without it.
const withoutExport = (code) => code.replace(/\nexport \{\};$/, '');

// Modules need vm.SourceTextModule, which needs a flag this process was not
// started with: all of a group's modules go to one child node, which
// answers with the V8 error of each (null where it compiles).
function v8ModuleProblems(codes) {
  if (codes.length === 0) return [];
  const check = `const vm = require('node:vm');
    const codes = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
    process.stdout.write(JSON.stringify(codes.map((code) => {
      try { new vm.SourceTextModule(code); return null; } catch (e) { return e.message; }
    })));`;
  const run = spawnSync(process.execPath, ['--experimental-vm-modules', '--no-warnings', '-e', check],
    { input: JSON.stringify(codes), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  assert.equal(run.status, 0, `the module check did not run: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

// ---------------------------------------------------------------------------
// What the stripper may refuse (exit 2) or decline to read (exit 3) in
// TypeScript the compiler takes, as docs/sandbox.md ("TypeScript") lists it,
// recognised on the compiler's tree of the input. Each returns a reason, or
// null. ts.getModuleInstanceState and ts.getBinaryOperatorPrecedence are
// the compiler's own (exported, not documented; package-lock pins 5.9.3).

function walk(node, visit) {
  visit(node);
  ts.forEachChild(node, (child) => walk(child, visit));
}
const some = (root, predicate) => {
  let found = false;
  walk(root, (node) => { found ||= predicate(node); });
  return found;
};
const skipOuter = (node) => (ts.isParenthesizedExpression(node) || ts.isTypeAssertionExpression(node)
  ? skipOuter(node.expression) : node);

// Whether `node` is the first thing in an expression statement or an
// arrow's expression body (`<T>{}.x` starts its statement too).
function startsStatementOrArrowBody(sf, node) {
  const start = node.getStart(sf);
  for (let n = node; n.parent && n.getStart(sf) === start; n = n.parent) {
    if (ts.isExpressionStatement(n.parent) || (ts.isArrowFunction(n.parent) && n.parent.body === n)) return true;
  }
  return false;
}

// "enum and const enum (not declare enum), namespace/module holding values,
// constructor parameter properties, decorators, import x = ..., export =,
// and a <T> assertion on {, function or class at the start of an arrow's
// body or a statement".
function documentedRefusal(sf) {
  let reason = null;
  walk(sf, (node) => {
    if (reason) return;
    const ambient = (node.flags & ts.NodeFlags.Ambient) !== 0;
    if (ts.isEnumDeclaration(node) && !ambient) reason = 'enum';
    else if (ts.isModuleDeclaration(node) && !ambient && ts.getModuleInstanceState(node) !== 0) reason = 'namespace with values';
    else if (ts.isParameter(node) && ts.isConstructorDeclaration(node.parent)
      && ts.getModifiers(node)?.some((m) => m.kind !== ts.SyntaxKind.DeclareKeyword)) reason = 'parameter property';
    else if (ts.isDecorator(node)) reason = 'decorator';
    else if (ts.isImportEqualsDeclaration(node)) reason = 'import =';
    else if (ts.isExportAssignment(node) && node.isExportEquals) reason = 'export =';
    else if (ts.isTypeAssertionExpression(node) && startsStatementOrArrowBody(sf, node)) {
      const operand = skipOuter(node.expression);
      if (ts.isObjectLiteralExpression(operand) || ts.isFunctionExpression(operand)
        || ts.isClassExpression(operand)) reason = 'type assertion on {, function or class';
    }
  });
  return reason;
}

// Erased syntax within an expression or statement: where the stripper
// writes spaces.
const erasedKinds = (node) => ts.isTypeNode(node) || ts.isAsExpression(node) || ts.isSatisfiesExpression(node)
  || ts.isNonNullExpression(node) || ts.isTypeAssertionExpression(node) || ts.isTypeParameterDeclaration(node);
// `class extends Base` has an ExpressionWithTypeArguments, a type node,
// with no type arguments in it.
const hasTypes = (sf) => some(sf, (node) => erasedKinds(node)
  && !(ts.isExpressionWithTypeArguments(node) && !node.typeArguments));
const isComparison = (node) => ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.LessThanToken;
const innermostStatement = (node) => {
  for (let n = node; n; n = n.parent) if (ts.isStatement(n) || ts.isClassElement(n)) return n;
  return node;
};
const unaryLike = (node) => ts.isPrefixUnaryExpression(node) || ts.isTypeOfExpression(node)
  || ts.isVoidExpression(node) || ts.isDeleteExpression(node) || ts.isAwaitExpression(node);

// "goes to V8 as written": a <T>x assertion after return, throw or yield
// whose x starts on a later line; a <T>x right after `a < b >` or in the
// right operand of a comparison `<`; a `<` after `x as T` that could open
// type arguments; any type erased after a comparison `<` in the same
// statement when the output would not read back as itself (the test cannot
// tell which, so any such type); an `as` that would regroup the operators
// around it once erased (`a + b as number * 3`, `-x as number ** 2`).
function documentedNotRead(sf) {
  let reason = null;
  const lineOf = (pos) => sf.getLineAndCharacterOfPosition(pos).line;
  walk(sf, (node) => {
    if (reason) return;
    if (ts.isTypeAssertionExpression(node) && (ts.isReturnStatement(node.parent) || ts.isThrowStatement(node.parent)
      || ts.isYieldExpression(node.parent)) && lineOf(node.expression.getStart(sf)) > lineOf(node.getStart(sf))) {
      reason = '<T>x after return, throw or yield, x on a later line';
    } else if (isComparison(node)) {
      const after = node.operatorToken.getEnd();
      if (some(innermostStatement(node), (n) => erasedKinds(n) && n.getStart(sf) >= after)) {
        reason = 'a type erased after a comparison <';
      }
      if (ts.isAsExpression(node.left) || ts.isSatisfiesExpression(node.left)) reason = 'a < after x as T';
    } else if ((ts.isAsExpression(node) || ts.isSatisfiesExpression(node)) && ts.isBinaryExpression(node.parent)
      && node.parent.left === node) {
      let inner = node.expression;
      while (ts.isAsExpression(inner) || ts.isSatisfiesExpression(inner)) inner = inner.expression;
      const outer = ts.getBinaryOperatorPrecedence(node.parent.operatorToken.kind);
      if ((ts.isBinaryExpression(inner) && ts.getBinaryOperatorPrecedence(inner.operatorToken.kind) < outer)
        || (unaryLike(inner) && node.parent.operatorToken.kind === ts.SyntaxKind.AsteriskAsteriskToken)) {
        reason = 'an as that would regroup its operators';
      }
    }
  });
  return reason;
}

// Refusals of TypeScript the compiler takes that docs/sandbox.md does not
// name, each recognised on the compiler's tree of the input, with why it is
// let be. Keep this short: each entry is a gap to close or to document.
const knownGaps = [];
const knownGap = (sf) => knownGaps.find((gap) => gap.matches(sf))?.name ?? null;

// ---------------------------------------------------------------------------
// Running the stripper.

let scratch;
const scratchDir = () => (scratch ??= mkdtempSync(path.join(tmpdir(), 'corral-ts-combinations-')));

// Strips every file in `files`, and resolves to one { status, stdout,
// stderr } each. The stripper takes one file per process; a shell loop
// starts it faster than node's spawn (about 2 ms a file against 3.5 on a
// small VM), and two loops keep both cores busy while this process goes on
// with the compiler.
function stripAll(files) {
  const loop = 'strip="$1"; shift; for f in "$@"; do "$strip" "$f" >"$f.out" 2>"$f.err"; echo $? >"$f.rc"; done';
  const halves = [0, 1].map((h) => files.filter((_, i) => i % 2 === h)).filter((list) => list.length > 0);
  return Promise.all(halves.map((list) => new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', loop, 'sh', stripper, ...list], { stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`the strip loop exited ${code}`))));
  }))).then(() => files.map((file) => ({
    status: Number(readFileSync(`${file}.rc`, 'utf8')),
    stdout: readFileSync(`${file}.out`, 'utf8'),
    stderr: readFileSync(`${file}.err`, 'utf8'),
  })));
}

const block = (title, text) => `--- ${title}:\n${text.endsWith('\n') ? text : `${text}\n`}`;
const fileName = (dir, group, i, suffix) => path.join(dir, `${group}-${String(i + 1).padStart(4, '0')}${suffix}`);

// Runs the oracle over one group; resolves to the failures (one message
// each) and counts of what happened:
//   plainJs:        of the combinations, how many are plain JavaScript
//                   (the stripper must give those back as they are);
//   stripped:       accepted, and judged;
//   refused:        exit 2, on something docs/sandbox.md lists;
//   notRead:        exit 3, the same;
//   knownGaps:      exit 2 or 3 on one of the knownGaps;
//   notTypeScript:  the compiler's parser reports a syntax error: only a
//                   crash (an exit but 0, 2 or 3) fails;
//   inputErrors:    exit 2 or 3 where the compiler's grammar check reports
//                   an error in the input (a getter with no body, say); or
//                   accepted, and the output means something else than the
//                   input or V8 refuses it, but the compiler's grammar
//                   check reports an error in the input, so there is no
//                   meaning to compare, or V8 refuses the compiler's own
//                   emit of it too (`x = 'y'` then `= b`): then the layout
//                   and a second strip are judged all the same.
async function judge(group, texts) {
  const dir = scratchDir();
  const inputs = texts.map((text, i) => {
    const file = fileName(dir, group, i, '.ts');
    writeFileSync(file, text);
    return file;
  });
  const stripping = stripAll(inputs);
  // The compiler's side, while the stripper runs. The emit is most of this
  // test's time (a few ms each): only for what the compiler parses.
  // Plain JavaScript is what the compiler reads as a .js file with no
  // syntax error and nothing "only in TypeScript files" (TS8xxx; one
  // program for all of them), and as a .ts file with no type in it: a .js
  // file reads `f<T>\n(b)` as comparisons, TypeScript (and the stripper)
  // as a call with a type argument.
  const asJs = moduleProgram(Object.fromEntries(texts.map((text, i) => [`/${i}.js`, text])));
  const expected = texts.map((text, i) => {
    const sf = parse('snippet.ts', text, ts.ScriptKind.TS);
    const typescript = sf.parseDiagnostics.length === 0;
    const plainJs = typescript && asJs.getSyntacticDiagnostics(asJs.getSourceFile(`/${i}.js`)).length === 0
      && !hasTypes(sf);
    return { sf, typescript, plainJs, emit: typescript ? emit(text) : null };
  });
  const runs = await stripping;

  const counts = { combinations: texts.length, plainJs: expected.filter((e) => e.plainJs).length,
    stripped: 0, refused: 0, notRead: 0, knownGaps: 0, notTypeScript: 0, inputErrors: 0 };
  const failures = [];
  const fail = (i, problem, extra = '') =>
    failures.push({ i, message: `${group} #${i + 1}: ${problem}\n${block('input', texts[i])}${extra}` });
  const accepted = [];
  runs.forEach((run, i) => {
    const { sf, typescript } = expected[i];
    if (![0, 2, 3].includes(run.status)) {
      fail(i, `exit ${run.status}`, block('stderr', run.stderr));
    } else if (!typescript) {
      counts.notTypeScript += 1;
    } else if (run.status === 0) {
      accepted.push(i);
    } else {
      if (run.status === 2 ? documentedRefusal(sf) : documentedNotRead(sf)) {
        counts[run.status === 2 ? 'refused' : 'notRead'] += 1;
      } else if (compilerErrors(texts[i]).length > 0) {
        counts.inputErrors += 1;
      } else if (knownGap(sf)) {
        counts.knownGaps += 1;
      } else {
        fail(i, `exit ${run.status} (${run.status === 2 ? 'refused' : 'not read'}) on TypeScript the compiler`
          + ' takes, which docs/sandbox.md does not list', block('stderr', run.stderr) + block('tsc emit', expected[i].emit));
      }
    }
  });

  // The outputs, stripped again while they are checked.
  const outputs = accepted.map((i) => {
    const file = fileName(dir, group, i, '.again.ts');
    writeFileSync(file, runs[i].stdout);
    return file;
  });
  const again = stripAll(outputs);
  // What the output means is judged only where the input has no error of
  // its own (see inputErrors above). The grammar check costs as much as an
  // emit, so it is asked only where something differs.
  const modules = [];
  const meaningProblem = (i, problem, extra, inputError = () => false) => {
    if (compilerErrors(texts[i]).length > 0 || inputError()) {
      counts.inputErrors += 1;
      counts.stripped -= 1;
    } else {
      fail(i, problem, extra);
    }
  };
  for (const i of accepted) {
    const out = runs[i].stdout;
    const shown = block('stripped', out) + block('tsc emit of the input', expected[i].emit);
    counts.stripped += 1;
    if (expected[i].plainJs) {
      // Plain JavaScript: the identity, byte for byte.
      if (out !== texts[i]) fail(i, 'plain JavaScript changed', shown);
      continue;
    }
    const layout = layoutProblem(texts[i], out);
    if (layout) {
      fail(i, `layout: ${layout}`, shown);
      continue;
    }
    const js = parse('snippet.js', out, ts.ScriptKind.JS);
    const syntax = [...js.parseDiagnostics, ...moduleProgram({ '/snippet.js': out }).getSyntacticDiagnostics()];
    if (syntax.length > 0) {
      meaningProblem(i, `the output is not JavaScript: ${syntax.map((d) => describe(js, d)).join('; ')}`, shown);
      continue;
    }
    const actual = emit(out);
    if (!sameMeaning(expected[i].emit, actual)) {
      meaningProblem(i, 'the output means something else than the input', shown + block('tsc emit of the stripped', actual));
      continue;
    }
    if (isModule(js)) {
      modules.push(i);
    } else {
      const v8 = v8ScriptProblem(out);
      if (v8) {
        meaningProblem(i, `V8 does not compile the output: ${v8}`, shown,
          () => v8ScriptProblem(withoutExport(expected[i].emit)) !== null);
      }
    }
  }
  const moduleProblems = v8ModuleProblems(modules.flatMap((i) => [runs[i].stdout, expected[i].emit]));
  modules.forEach((i, k) => {
    const problem = moduleProblems[2 * k];
    if (problem) {
      meaningProblem(i, `V8 does not compile the output as a module: ${problem}`, block('stripped', runs[i].stdout),
        () => moduleProblems[2 * k + 1] !== null);
    }
  });
  (await again).forEach((run, k) => {
    const i = accepted[k];
    if (run.status !== 0 || run.stdout !== runs[i].stdout) {
      fail(i, `stripping the output again (exit ${run.status}) does not give it back`,
        block('stripped', runs[i].stdout) + block('stripped again', run.status === 0 ? run.stdout : run.stderr));
    }
  });
  // In the order of the combinations, whichever check found them.
  return { failures: failures.sort((a, b) => a.i - b.i).map((f) => f.message), counts };
}

// A generator that drifts into text the compiler cannot parse would test
// nothing: most of each group must be TypeScript.
const mostlyTypeScript = (counts) => counts.notTypeScript <= counts.combinations / 3;

function report(t, group, { failures, counts }) {
  t.diagnostic(`${group}: ${JSON.stringify(counts)}`);
  assert.ok(mostlyTypeScript(counts), `${counts.notTypeScript} of ${counts.combinations} are not TypeScript`);
  if (failures.length > 0) {
    const shown = failures.slice(0, 25);
    assert.fail(`${failures.length} of ${counts.combinations} combinations fail`
      + `${failures.length > shown.length ? ` (the first ${shown.length} here)` : ''}:\n\n${shown.join('\n')}`);
  }
}

const built = () => assert.ok(existsSync(stripper), `${stripper} is not built (or set CORRAL_STRIP_TYPES)`);

test('combinations: the lists give distinct combinations, deterministically', () => {
  for (const make of [statementCombinations, classCombinations, expressionCombinations]) {
    const combos = make();
    assert.deepEqual(make(), combos);
    assert.equal(new Set(combos).size, combos.length, `${make.name}: duplicates`);
  }
});

test('combinations: pairs of statements without semicolons', async (t) => {
  built();
  report(t, 'statements', await judge('statements', statementCombinations()));
});

test('combinations: pairs and triples of class members without semicolons', async (t) => {
  built();
  report(t, 'members', await judge('members', classCombinations()));
});

test('combinations: expressions in every position', async (t) => {
  built();
  report(t, 'expressions', await judge('expressions', expressionCombinations()));
});

after(() => { if (scratch) rmSync(scratch, { recursive: true, force: true }); });
