// A protocol is one folder: its name is written as a literal only in harness/protocols/<name>/. Everywhere else in
// harness/ and suites/ code asks the module (PROTOCOLS, protocolModule) or imports the module's own constant, so
// adding, renaming or removing a protocol is a change to its folder and one line of the map.
import { describe, expect, it } from "vitest";
import ts from "typescript";
import { PROTOCOL_NAMES } from "../harness/protocols/index.js";
import { productFiles, sourceOf } from "./architecture-source.js";

/** Files allowed a protocol's name outside its folder, with why: none since issue 39's branches landed. */
const OWNED_ELSEWHERE = new Map<string, string>([]);

/**
 * The same words in another sense, each named where it is written. "grpc" is also the name of a check's area and of
 * a run's RPC interface (the report's `target.grpc`, the attestation's note); "connect" is also a socket's event and
 * the HTTP method CONNECT.
 */
const OTHER_SENSES = new Map<string, string>([
  ["harness/diff/compare-runs.ts grpc", "the report's target keys: grpc, http, image"],
  ["harness/reporters/html.ts grpc", "the attestation's note for the RPC interface"],
  ["suites/grpc/_internals/golden-case.ts grpc", "the golden cases' folder, fixtures/golden/grpc, the area's"],
  ["suites/http/_internals/path-rules.ts connect", "the HTTP method CONNECT, a verb of the path rules"],
]);

/** Listener methods: their first argument is an event's name ("connect" of a socket). */
const LISTENERS = new Set([
  "on",
  "once",
  "off",
  "emit",
  "addListener",
  "removeListener",
  "prependListener",
  "prependOnceListener",
]);
/** Utility types whose string arguments are property keys (`Omit<RunOptions, "grpc">`), not values. */
const KEY_TYPES = new Set(["Omit", "Pick"]);

const nameOfProperty = (n: ts.Node | undefined): string | undefined =>
  n !== undefined &&
  (ts.isPropertyAssignment(n) || ts.isPropertySignature(n)) &&
  (ts.isIdentifier(n.name) || ts.isStringLiteral(n.name))
    ? n.name.text
    : undefined;

/** Whether a literal is in another sense by where it stands: a check's area, the run's interfaces, an event, a key. */
function otherSense(node: ts.Node): boolean {
  let n: ts.Node = node;
  // Up through what does not change the literal's sense: parentheses, unions, `as const`, arrays, spreads, ternaries.
  while (
    ts.isParenthesizedExpression(n.parent) ||
    ts.isLiteralTypeNode(n.parent) ||
    ts.isUnionTypeNode(n.parent) ||
    ts.isAsExpression(n.parent) ||
    ts.isArrayLiteralExpression(n.parent) ||
    ts.isSpreadElement(n.parent) ||
    ts.isArrayTypeNode(n.parent) ||
    ts.isParenthesizedTypeNode(n.parent) ||
    (ts.isConditionalExpression(n.parent) && n.parent.condition !== n)
  )
    n = n.parent;
  const parent = n.parent;
  if (["area", "interfaces"].includes(nameOfProperty(parent) ?? "")) return true;
  if (ts.isTypeAliasDeclaration(parent) && parent.name.text === "Area") return true;
  if (
    ts.isBinaryExpression(parent) &&
    [parent.left, parent.right].some(
      (side) => side !== n && ts.isPropertyAccessExpression(side) && side.name.text === "area",
    )
  )
    return true;
  if (
    ts.isCallExpression(parent) &&
    parent.arguments[0] === n &&
    ts.isPropertyAccessExpression(parent.expression) &&
    LISTENERS.has(parent.expression.name.text)
  )
    return true;
  if (ts.isTypeReferenceNode(parent) && ts.isIdentifier(parent.typeName) && KEY_TYPES.has(parent.typeName.text))
    return true;
  // A socket's two "up" events, named together: "connect" or "secureConnect".
  const beside = ts.isUnionTypeNode(node.parent.parent)
    ? node.parent.parent.types.map((t) => t.getText())
    : ts.isConditionalExpression(node.parent)
      ? [node.parent.whenTrue.getText(), node.parent.whenFalse.getText()]
      : [];
  return beside.includes('"secureConnect"');
}

/** Every string literal in a file that is a built-in protocol's name, as "file:line name". */
function protocolLiterals(file: string): { where: string; name: string }[] {
  const sf = sourceOf(file);
  const found: { where: string; name: string }[] = [];
  const visit = (node: ts.Node) => {
    if (
      (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) &&
      (PROTOCOL_NAMES as readonly string[]).includes(node.text) &&
      !otherSense(node)
    ) {
      if (!ts.isImportDeclaration(node.parent) && !ts.isExportDeclaration(node.parent))
        found.push({
          where: `${file}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}`,
          name: node.text,
        });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

const inOwnFolder = (file: string, name: string) => file.startsWith(`harness/protocols/${name}/`);

describe("a protocol's name", () => {
  const files = productFiles(["harness", "suites"]);
  const all = files.flatMap((file) => protocolLiterals(file).map((l) => ({ ...l, file })));

  it("is read where it is defined (each protocol's folder writes its own name)", () => {
    for (const name of PROTOCOL_NAMES)
      expect(
        all.some((l) => l.name === name && inOwnFolder(l.file, name)),
        name,
      ).toBe(true);
  });

  it("appears as a literal nowhere outside its protocol's folder in harness/ and suites/", () => {
    const outside = all.filter(
      (l) => !inOwnFolder(l.file, l.name) && !OWNED_ELSEWHERE.has(l.file) && !OTHER_SENSES.has(`${l.file} ${l.name}`),
    );
    expect(outside.map((l) => `${l.where} "${l.name}"`)).toEqual([]);
  });

  it("is allowed elsewhere only where a literal still is (the lists hold nothing stale)", () => {
    for (const file of OWNED_ELSEWHERE.keys())
      expect(
        all.some((l) => l.file === file),
        file,
      ).toBe(true);
    for (const key of OTHER_SENSES.keys())
      expect(
        all.some((l) => `${l.file} ${l.name}` === key),
        key,
      ).toBe(true);
  });
});
