// Connections are made in one place (issue 39): in harness/, only harness/wire/tls.ts calls tls.connect and only
// harness/wire/http2.ts calls http2.connect, so that the run's TLS settings (CA, client certificate, server name,
// ALPN) reach every connection. Read from the source with the TypeScript compiler: a call through the module's
// default or namespace import (`tls.connect`), or through `connect` imported by name, under whatever local name.
import { describe, expect, it } from "vitest";
import ts from "typescript";
import { productFiles, sourceOf } from "./architecture-source.js";

/** The modules watched, by the name node gives them with and without its prefix, and the one file allowed each. */
const OWNERS: Readonly<Record<string, string>> = { tls: "harness/wire/tls.ts", http2: "harness/wire/http2.ts" };
const moduleName = (specifier: string): string | undefined =>
  OWNERS[specifier.replace(/^node:/, "")] && specifier.replace(/^node:/, "");

/** "tls.connect" or "http2.connect" for each such call in a file, with its line. */
function connectCalls(file: string): { file: string; call: string; line: number }[] {
  const sf = sourceOf(file);
  const modules = new Map<string, string>();
  const connects = new Map<string, string>();
  for (const statement of sf.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const name = moduleName(statement.moduleSpecifier.text);
    const clause = statement.importClause;
    if (name === undefined || clause === undefined || clause.isTypeOnly) continue;
    if (clause.name) modules.set(clause.name.text, name);
    const bindings = clause.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings)) modules.set(bindings.name.text, name);
    if (bindings && ts.isNamedImports(bindings)) {
      for (const e of bindings.elements)
        if ((e.propertyName ?? e.name).text === "connect" && !e.isTypeOnly) connects.set(e.name.text, name);
    }
  }
  const found: { file: string; call: string; line: number }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const viaModule =
        ts.isPropertyAccessExpression(callee) && callee.name.text === "connect" && ts.isIdentifier(callee.expression)
          ? modules.get(callee.expression.text)
          : undefined;
      const byName = ts.isIdentifier(callee) ? connects.get(callee.text) : undefined;
      const name = viaModule ?? byName;
      if (name !== undefined)
        found.push({ file, call: `${name}.connect`, line: sf.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

const calls = productFiles(["harness"]).flatMap(connectCalls);

describe("connections in harness/", () => {
  it("are found where they are made (the search reads the calls)", () => {
    expect(calls).toContainEqual(expect.objectContaining({ file: "harness/wire/tls.ts", call: "tls.connect" }));
    expect(calls).toContainEqual(expect.objectContaining({ file: "harness/wire/http2.ts", call: "http2.connect" }));
  });

  it("are made over TLS only by harness/wire/tls.ts and over HTTP/2 only by harness/wire/http2.ts", () => {
    const elsewhere = calls.filter((c) => c.file !== OWNERS[c.call.replace(/\.connect$/, "")]);
    expect(elsewhere.map((c) => `${c.file}:${c.line} ${c.call}`)).toEqual([]);
  });
});
