// The history checks run side by side (harness/check.ts, Sharing "history"): a server that keeps state fails the same
// history checks, with the same cause, whether they run one at a time (--concurrency 1), beside each other
// (--concurrency 8) or through a link that adds latency; and a legal server whose reply carries a clock gets the
// same verdicts in each.
import { beforeAll, describe, expect, it } from "vitest";
import { brokenGrpcServers } from "../../../fixtures/broken-servers/grpc/index.js";
import { implementations } from "../../../fixtures/implementations/index.js";
import { grpcChecks } from "../../../suites/index.js";
import { checkVerdicts } from "../../helpers/cli.js";
import { startLatencyProxy, type LatencyProxy } from "../../helpers/latency-proxy.js";
import { skipIfMissing } from "../../helpers/toolchain.js";

const HISTORY = grpcChecks.filter((c) => c.sharing === "history").map((c) => c.id);

/**
 * State of each kind: all calls counted, metadata kept, per connection, late, remembered requests; and a legal clock.
 */
const SUBJECTS = [
  "counts-calls",
  "echoes-earlier-metadata",
  "counts-per-connection",
  "tenth-call-python",
  "welcome-back-python",
];
const subjects = [
  ...SUBJECTS.map((name) => {
    const broken = brokenGrpcServers.find((b) => b.name === name);
    if (!broken) throw new Error(`no broken server ${name}`);
    return {
      name,
      missing: broken.missing ?? (async () => undefined),
      start: () => broken.start(),
      expected: broken.mustFail.filter((id) => HISTORY.includes(id)).sort() as string[] | undefined,
      because: broken.because ?? {},
    };
  }),
  ...["python-clock"].map((name) => {
    const legal = implementations.find((i) => i.name === name)!;
    // A clock in whole seconds since start: deterministic (a SHOULD) fails, as it did alone; nothing else does.
    return {
      name,
      missing: legal.missing,
      start: () => legal.start(),
      expected: ["grpc.stateless.deterministic"] as string[] | undefined,
      because: {} as Record<string, RegExp>,
    };
  }),
];

const MODES = [
  { mode: "--concurrency 1", args: ["--concurrency", "1"], viaProxy: false },
  { mode: "--concurrency 8", args: ["--concurrency", "8"], viaProxy: false },
  { mode: "--concurrency 8 through a 20 ms round trip", args: ["--concurrency", "8"], viaProxy: true },
];

describe("history checks side by side", () => {
  beforeAll(() => {
    expect(HISTORY.length).toBeGreaterThanOrEqual(4);
  });

  // Servers side by side (each its own process and state), the modes of one server one after another.
  describe.concurrent.each(subjects)("$name", (subject) => {
    it.sequential.for(MODES)("fails the same history checks with $mode", async ({ args, viaProxy }, { skip }) => {
      await skipIfMissing(subject, (why) => skip(why));
      // A fresh server each run: what one run leaves behind (a count, a remembered request) is not the next's.
      const started = await subject.start();
      let mine: LatencyProxy | undefined;
      try {
        const port = Number(started.address.split(":").at(-1));
        if (viaProxy) mine = await startLatencyProxy(port, 10);
        const run = await checkVerdicts([
          "--grpc",
          mine?.address ?? started.address,
          "--only",
          HISTORY.join(","),
          "--timeout",
          "3s",
          "--seed",
          "11",
          "--runs",
          "25",
          ...args,
        ]);
        expect(run.failed, run.report.checks.map((c) => `${c.id}: ${c.status} ${c.message}`).join("\n")).toEqual(
          subject.expected,
        );
        for (const [id, cause] of Object.entries(subject.because)) {
          if (HISTORY.includes(id)) expect(run.report.checks.find((c) => c.id === id)?.message, id).toMatch(cause);
        }
      } finally {
        await mine?.close();
        await started.close();
      }
    });
  });
});
