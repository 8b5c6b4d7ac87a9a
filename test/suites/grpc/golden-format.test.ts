// Golden cases are validated when loaded: a case that does not say exactly what it means is a load error naming the
// file, never a check that passes on any answer.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { goldenCheck, loadGoldenCases, validateGoldenCase } from "../../../suites/grpc/golden.js";

const valid = {
  description: "d",
  severity: "MUST",
  profile: "protocol",
  spec: "§7",
  request: { hex: "0a0561" },
  expect: { anyOf: [{ status: "INTERNAL" }, { status: "INVALID_ARGUMENT" }] },
};

describe("golden cases", () => {
  it.each([
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
  ])("refuses %j", (raw, message) => {
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
});
