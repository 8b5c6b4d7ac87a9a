// Golden cases are validated when loaded: a case that does not say exactly what it means is a load error naming the
// file, never a check that passes on any answer.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../../common/paths.js";
import { goldenCheck, loadGoldenCases, validateGoldenCase } from "../../../suites/grpc/golden.js";
import { GOLDEN_DIR } from "../../../suites/grpc/_internals/golden-case.js";
import { GOLDEN_CASE_AJV_OPTIONS, GOLDEN_CASE_SCHEMA } from "../../../suites/grpc/_internals/golden-case-schema.js";
import { GENERATED_VALIDATOR, type GoldenCaseValidate } from "../../../suites/grpc/_internals/golden-case-validator.js";

const valid = {
  description: "d",
  severity: "MUST",
  profile: "protocol",
  spec: "§7",
  request: { hex: "0a0561" },
  expect: { anyOf: [{ status: "INTERNAL" }, { status: "INVALID_ARGUMENT" }] },
};

/** Cases the format refuses, each with the line that names why. */
const refusals: [object, RegExp][] = [
  [
    { ...valid, expect: { anyOf: [{ status: "INVALID_ARGUMNT" }] } },
    /case\.json: expect\.anyOf\[0\]\.status must be one of OK, CANCELLED/,
  ],
  [{ ...valid, expect: { anyOf: [] } }, /case\.json: expect\.anyOf must NOT have fewer than 1 items/],
  [{ ...valid, expect: { outcome: "ok" } }, /case\.json: expect needs "anyOf"/],
  [{ ...valid, expect: { anyOf: [{ reply: "any" }, { sameAs: "" }] } }, /at most one reply outcome/],
  [{ ...valid, request: { frames: [{ hex: "" }] }, expect: { anyOf: [{ sameAs: "" }] } }, /sameAs compares Messages/],
  [{ ...valid, statusFrom: "server" }, /case\.json: statusFrom must be one of wire, client/],
  [{ ...valid, request: { hex: "", headers: { te: 1 } } }, /case\.json: request\.headers\.te must be string,null/],
  [{ ...valid, colour: "red" }, /case\.json: the case has an unknown field "colour"/],
  [
    { ...valid, request: { hex: "0a", frames: [{ hex: "0a" }] } },
    /case\.json: request needs exactly one of hex and frames/,
  ],
  [{ ...valid, request: { hex: "zz" } }, /case\.json: request\.hex must be hex bytes/],
  [
    { ...valid, request: { frames: [{ hex: "0a", length: -1 }] } },
    /case\.json: request\.frames\[0\]\.length must be >= 0/,
  ],
  [{ ...valid, severity: "MAY" }, /case\.json: severity must be one of MUST, SHOULD/],
  [{ ...valid, id: "http.x" }, /case\.json: id must match pattern/],
];

describe("golden cases", () => {
  it.each(refusals)("refuses %j", (raw, message) => {
    expect(() => validateGoldenCase("case.json", raw)).toThrow(message);
  });

  it("loads a valid case, with status alternatives, frames with a lying length and an explicit ID", () => {
    const c = validateGoldenCase("lying.json", {
      ...valid,
      id: "grpc.golden.lying-length",
      request: { frames: [{ hex: "0a0161", length: 9 }], headers: { te: null } },
    });
    const check = goldenCheck(c);
    expect(check.id).toBe("grpc.golden.lying-length");
    // Frames and headers built by hand are gRPC's wire only.
    expect(check.protocols).toEqual(["grpc"]);
    expect(goldenCheck(validateGoldenCase("plain.json", valid)).protocols).toBeUndefined();
  });

  it("refuses a folder where a file does not parse, or two cases share an ID", () => {
    const dir = mkdtempSync(join(tmpdir(), "golden-"));
    writeFileSync(join(dir, "a.json"), JSON.stringify({ ...valid, id: "grpc.golden.same" }));
    writeFileSync(join(dir, "b.json"), JSON.stringify({ ...valid, id: "grpc.golden.same" }));
    expect(() => loadGoldenCases(dir)).toThrow(/two golden cases have the ID grpc\.golden\.same/);
    writeFileSync(join(dir, "b.json"), "{ not json");
    expect(() => loadGoldenCases(dir)).toThrow(/b\.json: not JSON/);
  });

  it("loads every shipped case", () => {
    expect(loadGoldenCases().length).toBeGreaterThanOrEqual(6);
  });

  it(
    "the build's standalone validator (npm run build writes it into dist/) is of this schema and judges every " +
      "refusal above, the valid case and every shipped case as ajv compiling the schema does",
    async () => {
      const file = join(PACKAGE_ROOT, "dist", "suites", "grpc", "_internals", GENERATED_VALIDATOR);
      const built = (await import(file)) as { validate: GoldenCaseValidate; schemaJson: string };
      expect(built.schemaJson).toBe(JSON.stringify(GOLDEN_CASE_SCHEMA));
      const compiled = new Ajv(GOLDEN_CASE_AJV_OPTIONS).compile(GOLDEN_CASE_SCHEMA);
      const shipped = readdirSync(GOLDEN_DIR)
        .filter((f) => f.endsWith(".json"))
        .map((f) => JSON.parse(readFileSync(join(GOLDEN_DIR, f), "utf8")) as unknown);
      for (const raw of [...refusals.map(([r]) => r), valid, ...shipped]) {
        expect(built.validate(raw), JSON.stringify(raw)).toBe(compiled(raw));
        expect(built.validate.errors ?? null).toEqual(compiled.errors ?? null);
      }
    },
  );
});
