// Golden cases say which protocols they apply to: validated against PROTOCOLS when loaded, and a check over another
// protocol skips, saying so.
import { describe, expect, it } from "vitest";
import { goldenCheck, loadGoldenCases, validateGoldenCase } from "../../../suites/grpc/golden.js";

const base = {
  description: "d",
  severity: "MUST",
  profile: "contract",
  spec: "§2",
  request: { hex: "" },
  expect: { anyOf: [{ reply: "any" }] },
};

describe("a golden case's protocols", () => {
  it("narrow the check to the protocols named", () => {
    const c = validateGoldenCase("only-connect.json", { ...base, protocols: ["connect"] });
    expect(goldenCheck(c).protocols).toEqual(["connect"]);
    expect(goldenCheck(validateGoldenCase("any.json", base)).protocols).toBeUndefined();
    expect(
      goldenCheck(validateGoldenCase("wire.json", { ...base, request: { frames: [{ hex: "" }] } })).protocols,
    ).toEqual(["grpc"]);
  });

  it(
    "are validated when loaded: an unknown name, an empty list, or a wire case beyond gRPC stop the load naming " +
      "the file",
    () => {
      expect(() => validateGoldenCase("a.json", { ...base, protocols: ["grcp"] })).toThrow(
        /a\.json: protocols: "grcp" is not a protocol \(grpc, connect, grpc-web\)/,
      );
      expect(() => validateGoldenCase("b.json", { ...base, protocols: [] })).toThrow(
        /b\.json: protocols must be a non-empty list/,
      );
      expect(() =>
        validateGoldenCase("c.json", { ...base, protocols: ["grpc", "connect"], request: { frames: [{ hex: "" }] } }),
      ).toThrow(/c\.json: protocols: frames and headers/);
    },
  );

  it("leave the shipped cases as they were", () => {
    expect(loadGoldenCases().length).toBeGreaterThanOrEqual(6);
  });
});
