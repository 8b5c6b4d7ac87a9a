// --expect-failures files: patterns with reasons, and the errors that keep the list honest.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { expectationFor, loadExpectations, parseExpectations } from "../../harness/expectations.js";
import { catalogue } from "../../suites/index.js";

describe("expected failures", () => {
  it("reads patterns and reasons, skipping comments and blank lines", () => {
    const list = parseExpectations(
      "# known\n\ngrpc.encoding.* # our stack ignores encodings\ngrpc.unary.cardinality # grpc-go answers OK\n",
      "f",
    );
    expect(list).toEqual([
      { pattern: "grpc.encoding.*", reason: "our stack ignores encodings", line: 3 },
      { pattern: "grpc.unary.cardinality", reason: "grpc-go answers OK", line: 4 },
    ]);
    expect(expectationFor("grpc.encoding.gzip", list)?.line).toBe(3);
    expect(expectationFor("grpc.defaults.decodes", list)).toBeUndefined();
  });

  it("refuses a pattern without a reason", () => {
    expect(() => parseExpectations("grpc.encoding.gzip\n", "list.txt")).toThrow(
      "list.txt:1: grpc.encoding.gzip needs a reason after #",
    );
  });

  it("refuses a pattern that matches no check, so a typo cannot hide a failure", () => {
    const file = join(mkdtempSync(join(tmpdir(), "xfail-")), "list.txt");
    writeFileSync(file, "grpc.encodng.gzip # typo\n");
    expect(() => loadExpectations(file, catalogue)).toThrow(/list\.txt:1: grpc\.encodng\.gzip matches no check/);
  });
});
