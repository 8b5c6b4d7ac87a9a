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
  expect: { outcome: "status", status: ["INTERNAL", "INVALID_ARGUMENT"] },
};

describe("golden cases", () => {
  it.each([
    [{ ...valid, expect: { outcome: "status", status: "INVALID_ARGUMNT" } }, /case\.json: expect\.status "INVALID_ARGUMNT" is not a gRPC status name/],
    [{ ...valid, expect: { outcome: "status", status: [] } }, /names no status/],
    [{ ...valid, expect: { outcome: "fine" } }, /expect\.outcome must be ok, status or same-as/],
    [{ ...valid, colour: "red" }, /unknown field "colour"/],
    [{ ...valid, request: { hex: "0a", frames: [{ hex: "0a" }] } }, /exactly one of hex and frames/],
    [{ ...valid, request: { hex: "zz" } }, /request\.hex must be hex bytes/],
    [{ ...valid, request: { frames: [{ hex: "0a", length: -1 }] } }, /length must be a whole number/],
    [{ ...valid, severity: "MAY" }, /severity must be MUST or SHOULD/],
    [{ ...valid, id: "http.x" }, /is not a grpc\.\* check ID/],
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
