// The product's source as the TypeScript compiler reads it, for the architecture tests: its files, the imports
// between them, and each function's own length.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve, dirname } from "node:path";
import ts from "typescript";
import { PACKAGE_ROOT } from "../common/paths.js";

/** The folders of the product: what ships and what runs in a check (tests and generated code are not). */
export const PRODUCT_DIRS = ["harness", "suites", "reference-server", "common", "proto"] as const;

const generated = (path: string) => /(^|\/)(gen|node_modules)\//.test(path);

/** Every product .ts file, as a path relative to the package root. */
export function productFiles(dirs: readonly string[] = PRODUCT_DIRS): string[] {
  return dirs.flatMap((dir) =>
    readdirSync(join(PACKAGE_ROOT, dir), { recursive: true, encoding: "utf8" })
      .map((f) => `${dir}/${f}`)
      .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts") && !f.endsWith(".test.ts") && !generated(f)),
  );
}

const parsed = new Map<string, ts.SourceFile>();
export function sourceOf(file: string): ts.SourceFile {
  let sf = parsed.get(file);
  if (!sf)
    parsed.set(
      file,
      (sf = ts.createSourceFile(file, readFileSync(join(PACKAGE_ROOT, file), "utf8"), ts.ScriptTarget.Latest, true)),
    );
  return sf;
}

/** The product files a file imports (type-only imports and re-exports included): relative specifiers, resolved. */
export function importsOf(file: string): string[] {
  const out: string[] = [];
  const visit = (node: ts.Node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    )
      out.push(node.moduleSpecifier.text);
    if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    )
      out.push(node.arguments[0].text);
    ts.forEachChild(node, visit);
  };
  visit(sourceOf(file));
  return out
    .filter((s) => s.startsWith("."))
    .map((s) => relative(PACKAGE_ROOT, resolve(PACKAGE_ROOT, dirname(file), s)).replace(/\.js$/, ".ts"))
    .filter((f) => !generated(f));
}

/** The import graph of the product. */
export function importGraph(files: readonly string[] = productFiles()): Map<string, string[]> {
  return new Map(files.map((f) => [f, importsOf(f)]));
}

/**
 * The import circles of a graph: each a list of files, the first repeated at the end (Tarjan's strongly connected
 * components).
 */
export function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let index = 0;
  const at = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (v: string) => {
    at.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!at.has(w)) connect(w), low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, at.get(w) as number));
    }
    if (low.get(v) !== at.get(v)) return;
    const component: string[] = [];
    let w: string;
    do (w = stack.pop() as string), onStack.delete(w), component.push(w);
    while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v))
      found.push([...component.reverse(), component[0] as string]);
  };
  for (const v of graph.keys()) if (!at.has(v)) connect(v);
  return found;
}

export interface FunctionLength {
  file: string;
  name: string;
  line: number;
  /** Lines of its own: its span, less the spans of the functions nested in it but for the line each starts on. */
  own: number;
  /** Lines counted whole, the functions nested in it included. */
  whole: number;
}

const isFunction = (n: ts.Node): n is ts.FunctionLikeDeclaration =>
  ts.isFunctionDeclaration(n) ||
  ts.isMethodDeclaration(n) ||
  ts.isArrowFunction(n) ||
  ts.isFunctionExpression(n) ||
  ts.isConstructorDeclaration(n) ||
  ts.isGetAccessor(n) ||
  ts.isSetAccessor(n);

function nameOf(fn: ts.FunctionLikeDeclaration): string {
  if (fn.name) return fn.name.getText();
  const parent = fn.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return parent.name.getText();
  if (ts.isCallExpression(parent)) return `(callback of ${parent.expression.getText().slice(0, 40)})`;
  return "(anonymous)";
}

/** Every function of a file with its own length. */
export function functionLengths(file: string): FunctionLength[] {
  const sf = sourceOf(file);
  const lineOf = (pos: number) => sf.getLineAndCharacterOfPosition(pos).line;
  const span = (n: ts.Node) => lineOf(n.getEnd()) - lineOf(n.getStart(sf)) + 1;
  const out: FunctionLength[] = [];
  const nestedSpan = (node: ts.Node): number => {
    let total = 0;
    ts.forEachChild(node, (child) => {
      total += isFunction(child) ? span(child) - 1 : nestedSpan(child);
    });
    return total;
  };
  const visit = (node: ts.Node) => {
    if (isFunction(node) && node.body)
      out.push({
        file,
        name: nameOf(node),
        line: lineOf(node.getStart(sf)) + 1,
        own: span(node) - nestedSpan(node.body),
        whole: span(node),
      });
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}
