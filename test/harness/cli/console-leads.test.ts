// The console leads with what decides: a run's one gating failure in its first lines, the findings that do not gate
// after it and marked so at the start of the line, one line for the rest, the verdict last; --quiet and --verbose.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeMessage, encodeMessage } from "../../../contract/message.js";
import { cli } from "../../helpers/cli.js";
import { startGrpcJsServer, type TestServer } from "../../helpers/grpc-js-server.js";

let server: TestServer;
/**
 * Correct but for one defect: bodies between 1,000 and 3,000 bytes are refused while larger ones are served, which
 * grpc.limits.large-message (a MUST of the contract profile, late in the catalogue) fails and nothing else does.
 */
beforeAll(async () => {
  server = await startGrpcJsServer((req) => {
    const d = decodeMessage(req);
    if (!d.ok) return { code: 13, details: d.reason };
    if (d.message.body.length > 1000 && d.message.body.length < 3000) return { code: 3, details: "no" };
    return Buffer.from(encodeMessage(`hi ${d.message.body}`));
  });
});
afterAll(async () => {
  await server.close();
});

const args = () => ["check", "--grpc", server.address, "--skip", "contract.*", "--runs", "10", "--seed", "3"];

describe("the console of a run with one gating failure", () => {
  it("shows that failure in its first lines, with its replay; the rest after it; the verdict last", async () => {
    const run = await cli(args());
    expect(run.code, run.stderr).toBe(1);
    const lines = run.stdout.trimEnd().split("\n");
    const gating = lines.findIndex((l) => /^(FAIL|ERR ) grpc\.limits\.large-message /.test(l));
    expect(gating, run.stdout).toBe(1);
    expect(
      lines
        .slice(2, 12)
        .some((l) =>
          /^ {5}replay: npx example-conformance check .*--only grpc\.limits\.large-message --seed 3$/.test(l),
        ),
    ).toBe(true);
    // Exactly one line starts with a bare FAIL/ERR mark: the gating one.
    expect(lines.filter((l) => /^(FAIL|ERR )/.test(l))).toHaveLength(1);
    // grpc-js's own deviations are findings that do not gate, marked at the start of their line, after the gating one.
    const notGating = lines.map((l, i) => [l, i] as const).filter(([l]) => l.startsWith("not gating: "));
    expect(notGating.length).toBeGreaterThan(0);
    expect(notGating.every(([, i]) => i > gating)).toBe(true);
    // Passing and skipped checks: one summary line, no PASS or SKIP line without --verbose.
    expect(lines.some((l) => /^(PASS|SKIP) /.test(l))).toBe(false);
    expect(run.stdout).toMatch(
      /^1 gating failure\(s\), 3 finding\(s\) that do not gate; \d+ passed, \d+ skipped, 0 expected failures \(--verbose lists every check\) in [\d.]+ s$/m,
    );
    expect(lines.at(-1)).toMatch(/^not conformant: 1 gating check\(s\) failed \(seed 3\)$/);
  }, 60_000);

  it("--quiet prints only the gating failure and the verdict", async () => {
    const run = await cli([...args(), "--quiet"]);
    expect(run.code).toBe(1);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^(FAIL|ERR ) grpc\.limits\.large-message /);
    expect(lines.filter((l) => !l.startsWith("     "))).toEqual([lines[0], lines.at(-1)]);
    expect(lines.at(-1)).toMatch(/^not conformant: /);
  }, 60_000);

  it("--verbose lists every check too", async () => {
    const run = await cli([...args(), "--verbose"]);
    expect(run.stdout).toMatch(/^PASS grpc\.defaults\.decodes /m);
    expect(run.stdout).toMatch(/^SKIP grpc\.stateless\.replicas /m);
    expect(run.stdout.trimEnd().split("\n").at(-1)).toMatch(/^not conformant: /);
  }, 60_000);

  it("refuses --verbose with --quiet", async () => {
    const run = await cli([...args(), "--verbose", "--quiet"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe("example-conformance: --verbose and --quiet: one or the other\n");
  });
});
