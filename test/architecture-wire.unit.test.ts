// One HTTP/1.1 client in the harness (issue 39 item 1): in harness/, only the wire layer's http1.ts makes HTTP/1 client
// requests (`http.request`, `https.request`, `http.get`, `https.get`) or builds an `http.Agent` / `https.Agent`, so
// that bounds, connection policy and failure shapes are written once. Servers (`createServer`) are made anywhere,
// and the in-memory target (targets/http-inject.ts) is no socket client.
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { productFiles, sourceOf } from "./architecture-source.js";

const THE_CLIENT = "harness/wire/http1.ts";
const HTTP_MODULES = new Set(["http", "https", "node:http", "node:https"]);
const CLIENT_CALLS = new Set(["request", "get"]);

/** Each HTTP/1 client request or Agent a source makes, as "line: what". */
function clientUses(sf: ts.SourceFile): string[] {
  const namespaces = new Set<string>();
  /** Named imports, by their local name: what each is in the module. */
  const named = new Map<string, string>();
  for (const statement of sf.statements) {
    if (
      !ts.isImportDeclaration(statement) ||
      !ts.isStringLiteral(statement.moduleSpecifier) ||
      !HTTP_MODULES.has(statement.moduleSpecifier.text)
    )
      continue;
    const clause = statement.importClause;
    if (clause?.name) namespaces.add(clause.name.text);
    const bindings = clause?.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings)) namespaces.add(bindings.name.text);
    if (bindings && ts.isNamedImports(bindings))
      for (const e of bindings.elements) named.set(e.name.text, (e.propertyName ?? e.name).text);
  }
  /** Whether an expression is one of the modules: its name, a choice between them, or a variable holding one. */
  const isModule = (e: ts.Expression): boolean => {
    let inner = e;
    while (ts.isParenthesizedExpression(inner)) inner = inner.expression;
    if (ts.isIdentifier(inner)) return namespaces.has(inner.text);
    return ts.isConditionalExpression(inner) && (isModule(inner.whenTrue) || isModule(inner.whenFalse));
  };
  const holders = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer && isModule(node.initializer))
      namespaces.add(node.name.text);
    ts.forEachChild(node, holders);
  };
  holders(sf);
  const memberOf = (e: ts.Expression): string | undefined => {
    if (ts.isPropertyAccessExpression(e) && isModule(e.expression)) return e.name.text;
    if (ts.isIdentifier(e)) return named.get(e.text);
    return undefined;
  };
  const out: string[] = [];
  const visit = (node: ts.Node) => {
    const line = () => sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
    if (ts.isCallExpression(node) && CLIENT_CALLS.has(memberOf(node.expression) ?? ""))
      out.push(`${line()}: ${node.expression.getText(sf)}()`);
    if (ts.isNewExpression(node) && memberOf(node.expression) === "Agent")
      out.push(`${line()}: new ${node.expression.getText(sf)}()`);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

describe("the HTTP/1.1 client", () => {
  it("is told apart from servers and other modules (the rule reads what it must)", () => {
    const sample = ts.createSourceFile(
      "sample.ts",
      [
        'import http from "node:http";',
        'import * as https from "https";',
        'import { get as fetchIt, Agent, createServer } from "node:http";',
        'import http2 from "node:http2";',
        "http.request(url); https.get(url); fetchIt(url); new https.Agent({}); new Agent();",
        "http.createServer(); createServer(); http2.connect(url); other.request(url);",
        "const transport = secure ? https : http; transport.request(url); (secure ? https : http).get(url);",
      ].join("\n"),
      ts.ScriptTarget.Latest,
      true,
    );
    expect(clientUses(sample)).toEqual([
      "5: http.request()",
      "5: https.get()",
      "5: fetchIt()",
      "5: new https.Agent()",
      "5: new Agent()",
      "7: transport.request()",
      "7: (secure ? https : http).get()",
    ]);
    expect(clientUses(sourceOf(THE_CLIENT)).length).toBeGreaterThan(0);
  });

  it(`is made only in ${THE_CLIENT}`, () => {
    const elsewhere = productFiles(["harness"])
      .filter((f) => f !== THE_CLIENT)
      .flatMap((f) => clientUses(sourceOf(f)).map((use) => `${f}:${use}`));
    expect(elsewhere).toEqual([]);
  });
});

/**
 * undici (the load runs' pools, wire/http1.ts's Http1Client) is loaded by wire/_internals/undici-pool.ts alone, on the
 * first pool that asks for it: http1.ts imports its types only, and nothing else in the product names it, so a check
 * run never loads it and every HTTP/1 request still goes through the wire layer.
 */
describe("undici", () => {
  const UNDICI_POOL = "harness/wire/_internals/undici-pool.ts";
  /** Each way a source names undici: "import", "type import", or "require" (a string naming undici or a module of it). */
  const undiciUses = (sf: ts.SourceFile): string[] => {
    const out: string[] = [];
    const visit = (node: ts.Node) => {
      if (
        ts.isImportDeclaration(node) &&
        ts.isStringLiteral(node.moduleSpecifier) &&
        node.moduleSpecifier.text === "undici"
      )
        out.push(node.importClause?.isTypeOnly ? "type import" : "import");
      if (
        ts.isVariableDeclaration(node) &&
        node.initializer !== undefined &&
        ts.isStringLiteral(node.initializer) &&
        /^undici(\/|$)/.test(node.initializer.text)
      )
        out.push("require");
      if (
        ts.isCallExpression(node) &&
        node.arguments.some((a) => ts.isStringLiteral(a) && /^undici(\/|$)/.test(a.text))
      )
        out.push("require");
      ts.forEachChild(node, visit);
    };
    visit(sf);
    return out;
  };

  it(`is loaded only by ${UNDICI_POOL}, and only when a pool asks for it`, () => {
    const uses = productFiles().flatMap((f) => undiciUses(sourceOf(f)).map((use) => `${f}: ${use}`));
    expect(uses.sort()).toEqual([
      `${UNDICI_POOL}: require`,
      `${UNDICI_POOL}: type import`,
      `${THE_CLIENT}: type import`,
    ]);
  });
});
