// The TypeScript type stripper (src/sandbox/typescript/, the test binary
// corral_strip_types) against a corpus of snippets of the kind models write
// for code mode (tests/sandbox/typescript/corpus/) and against snippets it
// must refuse (tests/sandbox/typescript/refused/), with the `typescript` npm
// compiler as the oracle: nobody here wrote it, and it is the definition of
// what TypeScript means. tests/sandbox/typescript/README.md says how.
//
//   cd tests/e2e && CORRAL_STRIP_TYPES=.../corral_strip_types node --test typescript.test.mjs
//
// corral_strip_types FILE: exit 0 and the JavaScript on stdout; exit 2 and
// `LINE:COL: CONSTRUCT ...` on stderr for syntax it refuses; exit 3 and
// `LINE:COL: REASON` for input it could not read as TypeScript.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, emit, isModule, lines, parse, program, v8ScriptProblem } from './typescript_oracle.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const stripper = process.env.CORRAL_STRIP_TYPES
  ?? path.join(root, 'build/test/tests/sandbox/corral_strip_types');
const corpusDir = path.join(root, 'tests/sandbox/typescript/corpus');
const refusedDir = path.join(root, 'tests/sandbox/typescript/refused');

const listTs = (dir) => readdirSync(dir).filter((f) => f.endsWith('.ts')).sort();
const corpus = listTs(corpusDir).map((name) => ({
  name,
  js: /^\d{3}-js-/.test(name),
  text: readFileSync(path.join(corpusDir, name), 'utf8'),
}));
const refused = listTs(refusedDir).map((name) => ({
  name,
  text: readFileSync(path.join(refusedDir, name), 'utf8'),
}));

const constructs = ['enum', 'namespace', 'parameter property', 'decorator', 'import =', 'export =',
  'type assertion'];
// What a refusal's message may start with for each construct: a `const enum`
// and a namespace written `module N {}` may be called by what they are.
const messageStarts = { enum: ['enum', 'const enum'], namespace: ['namespace', 'module'] };
const refusedHeader = /^\/\/ refused: (.+) at (\d+)$/;

// Whether V8, the engine corral runs guest code in, compiles `code` in one of
// the shapes corral's execute accepts (an expression, a script, a function
// body that may await and return; src/sandbox/v8/guest.cc run_execute).
// Snippets with import/export statements are checked as a module by
// `node --check` instead: execute would compile none of them (a script has
// no imports), but they must still be JavaScript.
let scratch;
function v8Accepts(code, sf) {
  if (isModule(sf)) {
    scratch ??= mkdtempSync(path.join(tmpdir(), 'corral-ts-e2e-'));
    const file = path.join(scratch, 'snippet.mjs');
    writeFileSync(file, code);
    const checked = spawnSync(process.execPath, ['--check', file], { encoding: 'utf8' });
    return checked.status === 0 ? null : checked.stderr;
  }
  return v8ScriptProblem(code);
}

function strip(file) {
  const run = spawnSync(stripper, [file], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (run.error) throw run.error;
  return run;
}

// The first line of the output where it differs, for the assertion message.
function firstDifference(a, b) {
  const x = a.split('\n');
  const y = b.split('\n');
  for (let i = 0; i < Math.max(x.length, y.length); ++i) {
    if (x[i] !== y[i]) return `line ${i + 1}:\n  from the input:    ${x[i]}\n  from the stripped: ${y[i]}`;
  }
  return 'none';
}

test('the corpus: at least 320 snippets, about 40 of them plain JavaScript, numbered 001 on', () => {
  assert.ok(corpus.length >= 320, `${corpus.length} snippets`);
  assert.ok(corpus.filter((c) => c.js).length >= 35, `${corpus.filter((c) => c.js).length} plain-JS snippets`);
  corpus.forEach((c, i) => assert.match(c.name, /^\d{3}-[a-z0-9][a-z0-9-]*\.ts$/, c.name));
  corpus.forEach((c, i) => assert.equal(c.name.slice(0, 3), String(i + 1).padStart(3, '0'), c.name));
  assert.ok(refused.length >= 25, `${refused.length} refused snippets`);
});

// Without the stripper, the corpus must stay what it claims to be: valid
// TypeScript (no parse or grammar errors; the tools are undeclared, so type
// errors are expected), all of it erasable (TS's own erasableSyntaxOnly
// grammar check, TS1294, plus no decorators, which TS does not flag; TS also
// flags `<T>x`, which Node's type stripping can't tell from JSX, but the
// stripper erases it: there is no JSX in a .ts file), and the
// plain-JS snippets JavaScript with no TypeScript in them at all.
// The checker's grammar errors (TS1xxx, TS17xxx), which parseDiagnostics
// leaves to it, but not those a function body of corral's execute is meant to
// have: top-level return and await in what TS takes for a script.
const bodyOnly = new Set([1108, 1375, 1378, 1431, 1432]);
const grammar = (d) => (d.code < 2000 || (d.code >= 17000 && d.code < 18000)) && !bodyOnly.has(d.code);

test('the corpus is valid, erasable TypeScript; the js- snippets are plain JavaScript', () => {
  const files = Object.fromEntries(corpus.map((c) => [`/corpus/${c.name}`, c.text]));
  for (const c of corpus.filter((c) => c.js)) files[`/js/${c.name.replace(/\.ts$/, '.js')}`] = c.text;
  const p = program(files, { erasableSyntaxOnly: true, experimentalDecorators: false });
  const problems = [];
  for (const c of corpus) {
    const sf = p.getSourceFile(`/corpus/${c.name}`);
    for (const d of sf.parseDiagnostics) problems.push(`${c.name}:${describe(sf, d)}`);
    const assertions = new Set();
    let decorated = false;
    const walk = (node) => {
      if (ts.isTypeAssertionExpression(node)) assertions.add(node.getStart(sf));
      if (ts.isDecorator(node)) decorated = true;
      ts.forEachChild(node, walk);
    };
    walk(sf);
    for (const d of p.getSemanticDiagnostics(sf).filter(grammar)) {
      if (d.code !== 1294 || !assertions.has(d.start)) problems.push(`${c.name}:${describe(sf, d)}`);
    }
    if (decorated) problems.push(`${c.name}: has a decorator`);
    if (c.js) {
      const js = p.getSourceFile(`/js/${c.name.replace(/\.ts$/, '.js')}`);
      for (const d of p.getSyntacticDiagnostics(js)) problems.push(`${c.name} (as .js):${describe(js, d)}`);
      const error = v8Accepts(c.text, js);
      if (error) problems.push(`${c.name}: V8 does not compile it: ${error}`);
    }
  }
  assert.deepEqual(problems, []);
});

// Each refused snippet is valid TypeScript whose first line says what the
// stripper must refuse and where; TypeScript's erasableSyntaxOnly check
// (TS1294) flags the same line, for every construct but decorators, which
// TS does not flag (the AST has one on that line instead).
test('the refused snippets are valid TypeScript, and TypeScript refuses them too', () => {
  const files = Object.fromEntries(refused.map((r) => [`/refused/${r.name}`, r.text]));
  const p = program(files, { erasableSyntaxOnly: true, experimentalDecorators: true });
  const problems = [];
  for (const r of refused) {
    const header = refusedHeader.exec(r.text.split('\n')[0]);
    if (!header || !constructs.includes(header[1])) {
      problems.push(`${r.name}: first line is not // refused: (${constructs.join('|')}) at LINE`);
      continue;
    }
    const [, construct, line] = header;
    const sf = p.getSourceFile(`/refused/${r.name}`);
    for (const d of sf.parseDiagnostics) problems.push(`${r.name}:${describe(sf, d)}`);
    const lineOf = (pos) => sf.getLineAndCharacterOfPosition(pos).line + 1;
    if (construct === 'decorator') {
      const first = (node) => (ts.isDecorator(node) ? node : ts.forEachChild(node, first));
      const decorator = first(sf);
      if (!decorator || lineOf(decorator.getStart(sf)) !== Number(line)) {
        problems.push(`${r.name}: the first decorator is not on line ${line}`);
      }
    } else {
      const flagged = p.getSemanticDiagnostics(sf).filter((d) => d.code === 1294)
        .sort((a, b) => a.start - b.start);
      if (flagged.length === 0 || lineOf(flagged[0].start) !== Number(line)) {
        problems.push(`${r.name}: TS1294 first at ${flagged.length ? lineOf(flagged[0].start) : 'no line'}, header says ${line}`);
      }
    }
  }
  assert.deepEqual(problems, []);
});

// A stripper that is not there fails these tests rather than skipping them:
// scripts/test builds it with the other test binaries before it gets here.
const built = () => assert.ok(existsSync(stripper), `${stripper} is not built (or set CORRAL_STRIP_TYPES)`);

test('corral_strip_types: every corpus snippet keeps its layout and means what the compiler says', async (t) => {
  built();
  for (const c of corpus) {
    await t.test(c.name, () => {
      const run = strip(path.join(corpusDir, c.name));
      assert.equal(run.status, 0, `exit ${run.status}: ${run.stderr}`);
      const out = run.stdout;
      if (c.js) {
        // Plain JavaScript: the identity, byte for byte.
        assert.equal(out, c.text);
        return;
      }
      // Same lines, same line terminators, same lengths; only spaces, `;`,
      // `)` and `(` where the input had something else.
      const inLines = lines(c.text);
      const outLines = lines(out);
      assert.equal(outLines.length, inLines.length, 'line count');
      assert.deepEqual(out.match(/\r\n|\r|\n|\u2028|\u2029/g), c.text.match(/\r\n|\r|\n|\u2028|\u2029/g),
        'line terminators');
      inLines.forEach((line, i) => {
        const o = outLines[i];
        assert.equal(o.length, line.length, `line ${i + 1} length:\n  in:  ${line}\n  out: ${o}`);
        for (let j = 0; j < o.length; ++j) {
          if (o[j] === line[j] || o[j] === ' ' || o[j] === ';' || o[j] === ')' || o[j] === '(') continue;
          assert.fail(`line ${i + 1} column ${j + 1}: wrote ${JSON.stringify(o[j])} over ${JSON.stringify(line[j])}\n  in:  ${line}\n  out: ${o}`);
        }
      });
      // JavaScript, by the compiler's parser and by V8 (the parser accepts
      // type annotations in a .js file; only the program reports those, and
      // V8 refuses them). Top-level await and return: the parser reports
      // neither (the checker would), so parseDiagnostics must be empty as is.
      const sf = parse('snippet.js', out, ts.ScriptKind.JS);
      const at = (d) => `${describe(sf, d)}\n  out: ${outLines[sf.getLineAndCharacterOfPosition(d.start ?? 0).line]}`;
      assert.deepEqual(sf.parseDiagnostics.map(at), [], 'the output does not parse as JavaScript');
      const js = program({ '/snippet.js': out }).getSyntacticDiagnostics();
      assert.deepEqual(js.map(at), [], 'TypeScript syntax left in the output');
      assert.equal(v8Accepts(out, sf), null, `V8 does not compile the output:\n${out}`);
      // The oracle.
      const expected = emit(c.text);
      const actual = emit(out);
      assert.ok(actual === expected, `the compiler's emit differs, first at ${firstDifference(expected, actual)}\n--- stripped:\n${out}`);
    });
  }
});

test('corral_strip_types: every refused snippet is refused at its construct', async (t) => {
  built();
  for (const r of refused) {
    await t.test(r.name, () => {
      const [, construct, line] = refusedHeader.exec(r.text.split('\n')[0]);
      const run = strip(path.join(refusedDir, r.name));
      assert.equal(run.status, 2, `exit ${run.status}\n--- stdout:\n${run.stdout}\n--- stderr:\n${run.stderr}`);
      const message = run.stderr.trimEnd();
      assert.equal(message.split('\n').length, 1, `one line: ${message}`);
      const parsed = /^(\d+):(\d+): (.*)$/.exec(message);
      assert.ok(parsed, `LINE:COL: MESSAGE: ${message}`);
      assert.equal(Number(parsed[1]), Number(line), `line: ${message}`);
      const starts = messageStarts[construct] ?? [construct];
      assert.ok(starts.some((w) => parsed[3].startsWith(w)), `"${construct} ...": ${message}`);
    });
  }
});

// Input that is not TypeScript at all (here: never-closed tokens) is not a
// refusal: exit 3, and corral runs it unchanged so V8 reports the error.
test('corral_strip_types: exit 3 for what is not TypeScript, not 2', () => {
  built();
  scratch ??= mkdtempSync(path.join(tmpdir(), 'corral-ts-e2e-'));
  // The last one is TypeScript the stripper declines: erased, `<any>` and
  // the line break after it would leave `return` alone on its line.
  for (const text of ['const a: string = `never closed ${b}\n', 'let x: number = 1;\n/* never closed\n',
    'function f() {\n  return <any>\n    x;\n}\n']) {
    const file = path.join(scratch, 'broken.ts');
    writeFileSync(file, text);
    const run = strip(file);
    assert.equal(run.status, 3, `${JSON.stringify(text)}: exit ${run.status}: ${run.stdout}${run.stderr}`);
    assert.match(run.stderr.trimEnd(), /^\d+:\d+: \S[^\n]*$/);
  }
  const missing = strip(path.join(scratch, 'no-such-file.ts'));
  assert.ok(![0, 2].includes(missing.status), `a missing file: exit ${missing.status}`);
});

after(() => { if (scratch) rmSync(scratch, { recursive: true, force: true }); });
