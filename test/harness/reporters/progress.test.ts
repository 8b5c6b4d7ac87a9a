// `check` against a slow target shows it is alive: progress on stderr while the checks run (a line an interval in a
// log, a line redrawn on a terminal), never on stdout, cleared before the results; none under --quiet.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../../harness/cli/main.js";
import { PROGRESS_INTERVAL_MS } from "../../../harness/reporters/progress.js";
import { startReferenceServer, type ReferenceServer } from "../../../reference-server/start.js";
import { startLatencyProxy, type LatencyProxy } from "../../helpers/latency-proxy.js";

/** Each way: every request is answered about 0.7 s after it is sent, as the slow target of issue 41. */
const DELAY_MS = 350;
/** Two checks, one of several round trips: a run of a few seconds, longer than the interval the test sets. */
const ONLY = "grpc.defaults.decodes,grpc.errors.unknown-method";

interface Written {
  stream: "stdout" | "stderr";
  text: string;
}

async function run(extra: string[], stderrIsTty: boolean): Promise<{ code: number; written: Written[] }> {
  const written: Written[] = [];
  const code = await main(
    ["check", "--grpc", proxy.address, "--only", ONLY, "--runs", "4", "--seed", "1", "--timeout", "10s", ...extra],
    {
      stdout: (text) => void written.push({ stream: "stdout", text }),
      stderr: (text) => void written.push({ stream: "stderr", text }),
      isTty: false,
      stderrIsTty,
      // The product's interval is 10 s; the test's run is a few seconds, so it asks for a line every 500 ms.
      env: { EXAMPLE_CONFORMANCE_PROGRESS_INTERVAL: "500ms" },
    },
  );
  return { code, written };
}

const isVerdict = (w: Written) => w.stream === "stdout" && /^(conformant|partial|not conformant)/m.test(w.text);

let reference: ReferenceServer;
let proxy: LatencyProxy;
beforeAll(async () => {
  reference = await startReferenceServer({ grpcPort: 0, httpPort: 0, log: "silent", store: "memory:" });
  proxy = await startLatencyProxy(Number(reference.grpcAddress.split(":").at(-1)), DELAY_MS);
});
afterAll(async () => {
  await proxy?.close();
  await reference?.close();
});

describe("check's progress against a target that answers each request after 0.7 s", () => {
  it("is 10 s between lines in a log unless the environment says otherwise", () => {
    expect(PROGRESS_INTERVAL_MS).toBe(10_000);
  });

  it("off a terminal, prints lines on stderr while the checks run (done of total, the ones running, elapsed), " +
    "before the verdict", async () => {
    const { code, written } = await run([], false);
    expect(code).toBe(0);
    const lines = written.filter((w) => w.stream === "stderr" && w.text.includes("progress:"));
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines)
      expect(l.text).toMatch(
        /^example-conformance: progress: [0-2] of 2 checks done(; running: grpc\.[\w.-]+ \d+ s.*)?; \d+ s elapsed\n$/,
      );
    expect(lines.some((l) => /running: .*grpc\.defaults\.decodes/.test(l.text))).toBe(true);
    const header = written.findIndex((w) => w.stream === "stdout" && w.text.includes("2 checks against"));
    const verdict = written.findIndex(isVerdict);
    expect(header).toBeGreaterThanOrEqual(0);
    expect(written.indexOf(lines[0] as Written)).toBeGreaterThan(header);
    expect(written.indexOf(lines.at(-1) as Written)).toBeLessThan(verdict);
    expect(written.filter((w) => w.stream === "stdout").some((w) => w.text.includes("progress:"))).toBe(false);
  }, 60_000);

  it("on a terminal, redraws one line in place and clears it before the results", async () => {
    const { code, written } = await run([], true);
    expect(code).toBe(0);
    const drawn = written.filter((w) => w.stream === "stderr" && w.text.startsWith("\rprogress: "));
    expect(drawn.length).toBeGreaterThan(0);
    expect(drawn.some((w) => w.text.includes("running: ") && w.text.endsWith("\x1b[K"))).toBe(true);
    const cleared = written.findIndex((w) => w.stream === "stderr" && w.text === "\r\x1b[K");
    const summary = written.findIndex((w) => w.stream === "stdout" && w.text.includes("gating failure(s)"));
    expect(cleared).toBeGreaterThan(written.indexOf(drawn.at(-1) as Written));
    expect(cleared).toBeLessThan(summary);
  }, 60_000);

  it("under --quiet, prints no progress", async () => {
    const { code, written } = await run(["--quiet"], false);
    expect(code).toBe(0);
    expect(written.some((w) => w.text.includes("progress"))).toBe(false);
    expect(written.some(isVerdict)).toBe(true);
  }, 60_000);

  it("refuses an interval that is not a duration, in one line", async () => {
    let stderr = "";
    const code = await main(["check", "--grpc", proxy.address, "--only", ONLY], {
      stdout: () => undefined,
      stderr: (t) => void (stderr += t),
      isTty: false,
      env: { EXAMPLE_CONFORMANCE_PROGRESS_INTERVAL: "5" },
    });
    expect(code).toBe(2);
    expect(stderr).toMatch(/^example-conformance: \$EXAMPLE_CONFORMANCE_PROGRESS_INTERVAL 5: give a unit/);
    expect(stderr.trim().split("\n")).toHaveLength(1);
  });
});
