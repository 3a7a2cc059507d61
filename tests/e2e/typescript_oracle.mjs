// What typescript.test.mjs and typescript_combinations.test.mjs share: the
// TypeScript compiler (the `typescript` npm package) as the oracle of what a
// snippet means, and the helpers both use to ask it.
import vm from 'node:vm';
import ts from 'typescript';

// ECMAScript's line terminators: the stripper keeps every one of them, and
// every line keeps its length in UTF-16 code units (String.length).
export const lines = (text) => text.split(/\r\n|\r|\n|\u2028|\u2029/);

export const parse = (name, text, kind) =>
  ts.createSourceFile(name, text, ts.ScriptTarget.ESNext, true, kind);

export const describe = (sf, diagnostic) => {
  const { line, character } = sf.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
  return `${line + 1}:${character + 1}: TS${diagnostic.code} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`;
};

// One program over in-memory files, no lib and no module resolution: cheap,
// and enough for grammar checks. Its syntactic diagnostics of a .js file
// include "X can only be used in TypeScript files" (TS8xxx), which the
// parser alone (sourceFile.parseDiagnostics) does not report.
export function program(files, options = {}) {
  const sources = new Map(Object.entries(files).map(([name, text]) =>
    [name, parse(name, text, name.endsWith('.js') ? ts.ScriptKind.JS : ts.ScriptKind.TS)]));
  const host = {
    getSourceFile: (name) => sources.get(name),
    fileExists: (name) => sources.has(name),
    readFile: (name) => files[name],
    writeFile: () => {},
    getDefaultLibFileName: () => 'lib.d.ts',
    getCurrentDirectory: () => '/',
    getCanonicalFileName: (name) => name,
    useCaseSensitiveFileNames: () => true,
    getNewLine: () => '\n',
  };
  return ts.createProgram([...sources.keys()], {
    noLib: true, noResolve: true, types: [], noEmit: true, allowJs: true,
    target: ts.ScriptTarget.ESNext, module: ts.ModuleKind.ESNext, ...options,
  }, host);
}

// The oracle. Both the input and the stripped output go through the
// compiler's own emit (which erases the types of the input) with the same
// options, and must print the same. The printer can't tell a stripper's
// layout from the original's, only what the code means. `after` runs on
// both once types are gone and removes the differences that mean nothing:
//   - parentheses: `(x as T).y` prints `x.y` from the input (the compiler
//     drops the parentheses the assertion needed) but `(x).y` from the
//     stripped `(x     ).y`, and `f<T>` prints `(f)`. All parentheses go,
//     and the factory puts back the ones the tree needs when it rebuilds
//     each parent, on both sides alike, so a changed grouping still shows;
//   - empty statements and class elements: `;` the stripper writes where it
//     erased a whole statement or member (`type X = 1;`, an overload);
//   - a trailing comma in `import { a, }` where `type B` was erased;
//   - moduleDetection force makes both files modules, so a file whose only
//     module syntax was `import type` prints `export {};` on both sides;
//   - comments (removeComments) and blank lines.
// verbatimModuleSyntax keeps every value import whether or not it is used,
// as the stripper does, and drops only what is written as a type.
// The compiler leaves a NotEmittedStatement (printed as nothing) where it
// erased a statement; alone in a block it still makes the block print on
// two lines.
const dropEmpty = (list) => list.filter((s) => !ts.isEmptyStatement(s) && !ts.isNotEmittedStatement(s));
function normaliser(context) {
  const { factory } = context;
  const visit = (node) => {
    if (ts.isParenthesizedExpression(node) || ts.isPartiallyEmittedExpression(node)) {
      return visit(node.expression);
    }
    // An instantiation expression `f<T>` leaves `(f)` (the node, its type
    // arguments gone, which the factory parenthesizes); in a heritage clause
    // the node is the syntax of `extends Base<T>` and stays.
    if (ts.isExpressionWithTypeArguments(node)) return visit(node.expression);
    if (ts.isHeritageClause(node)) {
      return factory.updateHeritageClause(node, node.types.map((t) =>
        factory.updateExpressionWithTypeArguments(t, visit(t.expression), t.typeArguments)));
    }
    const n = ts.visitEachChild(node, visit, context);
    if (ts.isSourceFile(n)) return factory.updateSourceFile(n, dropEmpty(n.statements));
    if (ts.isBlock(n)) return factory.updateBlock(n, dropEmpty(n.statements));
    if (ts.isModuleBlock(n)) return factory.updateModuleBlock(n, dropEmpty(n.statements));
    if (ts.isCaseClause(n)) return factory.updateCaseClause(n, n.expression, dropEmpty(n.statements));
    if (ts.isDefaultClause(n)) return factory.updateDefaultClause(n, dropEmpty(n.statements));
    // `import { a, type B }` leaves `import { a,        }`: a trailing comma.
    if (ts.isNamedImports(n)) return factory.updateNamedImports(n, factory.createNodeArray([...n.elements]));
    if (ts.isNamedExports(n)) return factory.updateNamedExports(n, factory.createNodeArray([...n.elements]));
    if (ts.isClassDeclaration(n) || ts.isClassExpression(n)) {
      const members = n.members.filter((m) => !ts.isSemicolonClassElement(m));
      if (members.length !== n.members.length) {
        return ts.isClassDeclaration(n)
          ? factory.updateClassDeclaration(n, n.modifiers, n.name, n.typeParameters, n.heritageClauses, members)
          : factory.updateClassExpression(n, n.modifiers, n.name, n.typeParameters, n.heritageClauses, members);
      }
    }
    return n;
  };
  return (sf) => visit(sf);
}
const emitOptions = {
  target: ts.ScriptTarget.ESNext,
  module: ts.ModuleKind.ESNext,
  moduleDetection: ts.ModuleDetectionKind.Force,
  verbatimModuleSyntax: true,
  useDefineForClassFields: true,
  removeComments: true,
  newLine: ts.NewLineKind.LineFeed,
};
export const emit = (text) => ts.transpileModule(text, {
  compilerOptions: emitOptions, fileName: 'snippet.ts', transformers: { after: [normaliser] },
}).outputText.split('\n').map((line) => line.trimEnd()).filter((line) => line !== '').join('\n');

// Whether the file has module syntax (an import or an export).
export const isModule = (sf) => sf.statements.some((s) => ts.isImportDeclaration(s) || ts.isExportDeclaration(s)
  || ts.isExportAssignment(s) || ts.getModifiers?.(s)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword));

// Whether V8 compiles a script in one of the shapes corral's execute tries
// (an expression, a script, an async function body); null if it does.
export function v8ScriptProblem(code) {
  let error;
  for (const text of [`(${code}\n)`, code, `(async () => {${code}\n})()`]) {
    try {
      new vm.Script(text);
      return null;
    } catch (e) {
      error = e.message;
    }
  }
  return error;
}
