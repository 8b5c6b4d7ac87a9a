// Which code `npm run mutation` mutates: a seeded sample of the reference server's request-handling code, drawn by
// code unit (a function, a class's method, a top-level constant), so that one run is bounded (aimed at 30 minutes on
// 2 cores; docs/development.md says what it took) and the sample does not move when a file's lines do. Each unit has a
// key that names it, not its lines ("reference-server/http/routes.ts#etagOf", "…/store.ts#createMemoryStore/return/delete"); a unit
// is drawn when a seeded hash of its key falls under the share, so adding, removing or moving one function changes
// only that function's membership. The drawn units become Stryker mutate ranges "file:line:column-line:column" at run
// time, and Stryker mutates what lies wholly inside them. EXAMPLE_CONFORMANCE_MUTATION_SAMPLE=all mutates the files
// whole (1,638 mutants, ten times the default sample's 170); a number in (0, 1] is the share of units taken;
// EXAMPLE_CONFORMANCE_MUTATION_SAMPLE_SEED picks another sample.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import ts from "typescript";

/**
 * The request handling a client can see: routes, representation, negotiation, links, pages, auth, the memory store's
 * semantics, the gRPC handler and Connect / gRPC-Web. Not logging, the CLI, the SQL stores' plumbing, the data
 * directory, nor the protection layers (grpc-guard, protection, owed, connection-gate: the reference server's own
 * tests hold them, and the catalogue sends nothing that reaches their limits).
 */
export const MUTATION_FILES = Object.freeze([
  "reference-server/grpc.ts",
  "reference-server/hello.ts",
  "reference-server/http/auth.ts",
  "reference-server/http/connect-rpc.ts",
  "reference-server/http/errors.ts",
  "reference-server/http/links.ts",
  "reference-server/http/negotiation.ts",
  "reference-server/http/page.ts",
  "reference-server/http/representation.ts",
  "reference-server/http/routes.ts",
  "reference-server/http/store.ts",
]);

export const DEFAULT_SHARE = 0.06;
export const DEFAULT_SAMPLE_SEED = 44;
/** A unit of more tokens than this is drawn by its parts (a function by its statements), so that one draw stays small. */
export const SPLIT_TOKENS = 150;

/** The code of a node without its comments and spacing: a reflowed comment inside it does not change it. */
function tokensOf(node, sourceFile) {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, true, ts.LanguageVariant.Standard, node.getText(sourceFile));
  const out = [];
  for (let t = scanner.scan(); t !== ts.SyntaxKind.EndOfFileToken; t = scanner.scan()) out.push(scanner.getTokenText());
  return out.join(" ");
}

const shortHash = (text) => createHash("sha256").update(text).digest("hex").slice(0, 8);
/** How many tokens a node's code holds (comments and spacing not counted: a reflow does not change it). */
const tokenCount = (node, sourceFile) => tokensOf(node, sourceFile).split(" ").length;

/** A readable, line-free name for a statement that declares nothing: its call and first literal, or its code's hash. */
function statementName(statement, sourceFile) {
  if (ts.isReturnStatement(statement)) return "return";
  if (ts.isExpressionStatement(statement) && ts.isCallExpression(statement.expression)) {
    const call = statement.expression;
    const callee = call.expression.getText(sourceFile).replace(/\s+/g, "");
    const literal = call.arguments.find((a) => ts.isStringLiteralLike(a));
    if (callee.length <= 60) return literal ? `${callee}(${JSON.stringify(literal.text)})` : `${callee}()`;
  }
  const kind = ts.SyntaxKind[statement.kind].replace(/Statement$|Declaration$/, "").toLowerCase();
  return `${kind}@${shortHash(tokensOf(statement, sourceFile))}`;
}

/** The name of an element of an array: its first property ("[url=ROOT_PATH]") when it is an object, else its hash. */
function elementName(element, sourceFile) {
  const first = ts.isObjectLiteralExpression(element) ? element.properties[0] : undefined;
  if (first && ts.isPropertyAssignment(first)) {
    const text = `${first.name.getText(sourceFile)}=${tokensOf(first.initializer, sourceFile).replace(/ /g, "")}`;
    if (text.length <= 60) return `[${text}]`;
  }
  return `[${shortHash(tokensOf(element, sourceFile))}]`;
}

/**
 * The code units of one file, in source order: each { key, start, end } with start and end as { line (1-based),
 * column (0-based) } as Stryker's mutate ranges take them. A unit is a top-level function or constant, a class's
 * member, or any other top-level statement that holds code; one of more than SPLIT_TOKENS tokens is cut into its
 * parts: a function into its top-level statements, a returned object into its properties, an array into its elements,
 * a call into its function argument ("routes.ts#collectionResources/return/[url=ROOT_PATH]/methods/GET"). Sizes are
 * counted in tokens, not lines, so that a reflowed comment never cuts a unit. Types, interfaces and imports hold no
 * mutant and are no unit. Two units of the same name are told apart by "~2", "~3" in order.
 */
export function codeUnits(file, source) {
  const sourceFile = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const units = [];
  const seen = new Map();
  const where = (pos) => {
    const { line, character } = sourceFile.getLineAndCharacterOfPosition(pos);
    return { line: line + 1, column: character };
  };
  const push = (name, node) => {
    const count = (seen.get(name) ?? 0) + 1;
    seen.set(name, count);
    const key = `${file}#${name}${count > 1 ? `~${count}` : ""}`;
    units.push({ key, start: where(node.getStart(sourceFile)), end: where(node.end) });
  };
  /** The statements of a block, each [name, node]: a declaration by its names, another by statementName. */
  const statements = (list) =>
    list.flatMap((s) => {
      if (ts.isFunctionDeclaration(s) && s.name) return [[s.name.getText(sourceFile), s]];
      if (ts.isVariableStatement(s))
        return s.declarationList.declarations.map((d) => [d.name.getText(sourceFile).replace(/\s+/g, ""), d]);
      return [[statementName(s, sourceFile), s]];
    });
  /** The parts of a long node, each [name, node], or none when it is not cut. */
  const parts = (node) => {
    if (ts.isVariableDeclaration(node) || ts.isPropertyDeclaration(node) || ts.isPropertyAssignment(node))
      return node.initializer ? parts(node.initializer) : [];
    if (ts.isParenthesizedExpression(node) || ts.isAwaitExpression(node) || ts.isAsExpression(node))
      return parts(node.expression);
    if (ts.isReturnStatement(node) || ts.isExpressionStatement(node))
      return node.expression ? parts(node.expression) : [];
    if (ts.isFunctionLike(node) && node.body)
      return ts.isBlock(node.body) ? statements(node.body.statements) : parts(node.body);
    if (ts.isObjectLiteralExpression(node))
      return node.properties.map((p) => [p.name ? p.name.getText(sourceFile) : statementName(p, sourceFile), p]);
    if (ts.isArrayLiteralExpression(node)) return node.elements.map((e) => [elementName(e, sourceFile), e]);
    if (ts.isCallExpression(node)) {
      const fn = node.arguments.findLast((a) => ts.isArrowFunction(a) || ts.isFunctionExpression(a));
      return fn ? parts(fn) : [];
    }
    return [];
  };
  /** A unit, or its parts when it is long and can be cut. */
  const unit = (name, node) => {
    const cut = tokenCount(node, sourceFile) > SPLIT_TOKENS ? parts(node) : [];
    if (cut.length > 0) for (const [n, part] of cut) unit(`${name}/${n}`, part);
    else push(name, node);
  };
  for (const statement of sourceFile.statements) {
    if (
      ts.isImportDeclaration(statement) ||
      ts.isImportEqualsDeclaration(statement) ||
      ts.isInterfaceDeclaration(statement) ||
      ts.isTypeAliasDeclaration(statement) ||
      ts.isModuleDeclaration(statement) ||
      (ts.isExportDeclaration(statement) && statement.isTypeOnly) ||
      statement.kind === ts.SyntaxKind.EmptyStatement
    )
      continue;
    if (ts.isClassDeclaration(statement)) {
      const cls = statement.name ? statement.name.getText(sourceFile) : "default";
      for (const member of statement.members) {
        if (ts.isIndexSignatureDeclaration(member) || ts.isSemicolonClassElement(member)) continue;
        if (ts.isPropertyDeclaration(member) && member.initializer === undefined) continue;
        const name = ts.isConstructorDeclaration(member)
          ? "constructor"
          : ts.isClassStaticBlockDeclaration(member)
            ? "static"
            : member.name
              ? member.name.getText(sourceFile)
              : "member";
        unit(`${cls}.${name}`, member);
      }
      continue;
    }
    for (const [name, node] of statements([statement])) unit(name, node);
  }
  return units;
}

/** Where a unit draws: a hash of the seed and its key, uniform in [0, 1), the same on every machine. */
export function drawOf(key, seed) {
  return createHash("sha256").update(`${seed}\0${key}`).digest().readUInt32BE(0) / 4294967296;
}

/** Stryker's mutate range of a unit: "file:line:column-line:column" (lines 1-based, columns 0-based). */
export const rangeOf = (file, u) => `${file}:${u.start.line}:${u.start.column}-${u.end.line}:${u.end.column}`;

/**
 * The units of a sample: each file's units whose draw falls under the share (at least one a file: the one that
 * draws lowest), in file and source order.
 */
export function sampleUnits({ share = DEFAULT_SHARE, seed = DEFAULT_SAMPLE_SEED, root = "." } = {}) {
  const drawn = [];
  for (const file of MUTATION_FILES) {
    const units = codeUnits(file, readFileSync(`${root}/${file}`, "utf8"));
    const taken = units.filter((u) => drawOf(u.key, seed) < share);
    const lowest = units.reduce((a, b) => (drawOf(b.key, seed) < drawOf(a.key, seed) ? b : a), units[0]);
    drawn.push(...(taken.length > 0 ? taken : lowest ? [lowest] : []).map((u) => ({ file, ...u })));
  }
  return drawn;
}

/** The mutate ranges of a sample (sampleUnits as Stryker takes them). */
export function mutationSample(options = {}) {
  return sampleUnits(options).map((u) => rangeOf(u.file, u));
}

/** The units of the last file unitOf was asked about: a report asks file by file, mutant by mutant. */
let unitsSeen = { file: "", source: "", units: [] };

/**
 * The key of the unit a mutant lies in ({ line 1-based, column 1-based } start and end, as Stryker's report gives
 * them), or the file alone when it lies in none (a mutant that spans the statements of a long function).
 */
export function unitOf(file, source, location) {
  if (unitsSeen.file !== file || unitsSeen.source !== source)
    unitsSeen = { file, source, units: codeUnits(file, source) };
  const inside = (u) =>
    (u.start.line < location.start.line ||
      (u.start.line === location.start.line && u.start.column <= location.start.column - 1)) &&
    (u.end.line > location.end.line || (u.end.line === location.end.line && u.end.column >= location.end.column - 1));
  return unitsSeen.units.find(inside)?.key ?? file;
}

/** What the environment asks for: "all", or the share and the seed of a sample. */
export function sampleFromEnv(env = process.env) {
  const asked = env.EXAMPLE_CONFORMANCE_MUTATION_SAMPLE;
  if (asked === "all") return "all";
  const share = asked === undefined ? DEFAULT_SHARE : Number(asked);
  if (!(share > 0 && share <= 1))
    throw new Error(
      `EXAMPLE_CONFORMANCE_MUTATION_SAMPLE must be "all" or a share in (0, 1], not ${JSON.stringify(asked)}`,
    );
  const seed =
    env.EXAMPLE_CONFORMANCE_MUTATION_SAMPLE_SEED === undefined
      ? DEFAULT_SAMPLE_SEED
      : Number(env.EXAMPLE_CONFORMANCE_MUTATION_SAMPLE_SEED);
  if (!Number.isInteger(seed)) throw new Error("EXAMPLE_CONFORMANCE_MUTATION_SAMPLE_SEED must be an integer");
  return { share, seed };
}

/** The mutate list the environment asks for: the files whole, or a sample. */
export function mutateFromEnv(env = process.env, root = ".") {
  const asked = sampleFromEnv(env);
  return asked === "all" ? [...MUTATION_FILES] : mutationSample({ ...asked, root });
}
