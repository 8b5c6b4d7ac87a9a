// The receive-limit probe answers bodyBytesAllowed as soon as the sizes that decide it have answered, with the value
// the whole probe gives, whatever order the answers come in; a check that needs 64 KiB waits on no 2 MiB upload.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeMessage, encodeMessage } from "../../../contract/message.js";
import { runConformance } from "../../../harness/api/run-conformance.js";
import { createInMemoryClient } from "../../../harness/targets/in-memory-client.js";
import { Status } from "../../../harness/protocols/rpc.js";
import {
  allowedOnceAll,
  allowedSoFar,
  limitFrom,
  PROBE_SIZES,
  type SizeAnswer,
} from "../../../suites/grpc/_internals/receive-limit.js";

/** What the whole probe makes of all answers (its judge, less the still-serving question, which needs a target). */
const whole = limitFrom;

const CODES = {
  exhausted: Status.RESOURCE_EXHAUSTED,
  internal: Status.INTERNAL,
  slow: Status.DEADLINE_EXCEEDED,
} as const;
const answerArb = fc
  .array(fc.constantFrom("served", "exhausted", "internal", "slow"), {
    minLength: PROBE_SIZES.length,
    maxLength: PROBE_SIZES.length,
  })
  .map((kinds) =>
    kinds.map((k, i): SizeAnswer => {
      const size = PROBE_SIZES[i] as number;
      return k === "served" ? { size, served: true } : { size, served: false, code: CODES[k], reason: k };
    }),
  );

describe("bodyBytesAllowed's early answer", () => {
  it("is, in whatever order the sizes answer, the value of the whole probe (or waits for it)", () => {
    fc.assert(
      fc.property(
        answerArb,
        fc.constantFrom(1, 1024, 50_000, 64 * 1024, 120 * 1024, 3_000_000, 8 * 1024 * 1024),
        fc.func(fc.integer()),
        (answers, bound, key) => {
          const order = answers.map((_, i) => i).sort((a, b) => key(a) - key(b) || a - b);
          const seen: (SizeAnswer | undefined)[] = answers.map(() => undefined);
          let early: number | "whole" | undefined;
          for (const i of order) {
            seen[i] = answers[i];
            early ??= allowedSoFar(seen, bound);
          }
          const final = allowedOnceAll(whole(answers), bound);
          // Only a refusal that is no RESOURCE_EXHAUSTED defers to the whole probe (which asks whether the target
          // died).
          if (early === "whole")
            expect(answers.some((a) => !a.served && a.code !== Status.RESOURCE_EXHAUSTED)).toBe(true);
          else expect(early).toBe(final);
        },
      ),
      { numRuns: 2000, seed: 29 },
    );
  });

  it("needs only the sizes up to the first at or past the bound when they are served", () => {
    const served = PROBE_SIZES.map((size): SizeAnswer => ({ size, served: true }));
    // 1, 16, 60 and 120 KiB answered; 250 KiB and up still open.
    expect(allowedSoFar([...served.slice(0, 4), ...served.slice(4).map(() => undefined)], 64 * 1024)).toBe(64 * 1024);
    expect(allowedSoFar([...served.slice(0, 3), undefined, ...served.slice(4)], 64 * 1024)).toBeUndefined();
  });
});

describe("the whole probe's limit", () => {
  const at =
    (code: number | undefined) =>
    (size: number): SizeAnswer =>
      code === undefined ? { size, served: true } : { size, served: false, code, reason: `code ${code}` };
  it("reads a size not answered within the timeout as no limit, and names it", () => {
    const answers = PROBE_SIZES.map((size) =>
      at(
        size === 1024 * 1024
          ? Status.DEADLINE_EXCEEDED
          : size === 4 * 1024 * 1024
            ? Status.RESOURCE_EXHAUSTED
            : undefined,
      )(size),
    );
    const limit = limitFrom(answers);
    expect(limit.firstRefused?.size).toBe(4 * 1024 * 1024);
    expect(limit.largestServed).toBe(2 * 1024 * 1024);
    expect(limit.unanswered).toEqual([1024 * 1024]);
    expect(limit.summary).toBe(
      "receive limit between 2 MiB (served) and 4 MiB (code 8); no answer within the timeout for 1 MiB (not read " +
        "as a limit)",
    );
  });
  it("reads any other refusal as the limit", () => {
    const limit = limitFrom(
      PROBE_SIZES.map((size) => at(size >= 1024 * 1024 ? Status.RESOURCE_EXHAUSTED : undefined)(size)),
    );
    expect(limit.summary).toBe("receive limit between 500 KiB (served) and 1 MiB (code 8)");
  });
});

describe("grpc.strings.unicode against a target whose large bodies are slow", () => {
  it("finishes while the 2 MiB and 4 MiB bodies are still unanswered, and the limit checks still judge them", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let pendingAtUnicode = -1;
    let pending = 0;
    const report = await runConformance({
      grpc: {
        address: "memory:slow-large",
        inMemory: createInMemoryClient(async ({ message }) => {
          const d = decodeMessage(message);
          if (!d.ok) return { code: Status.INVALID_ARGUMENT, details: d.reason };
          if (d.message.body.length >= 2 * 1024 * 1024) {
            pending++;
            await gate;
            pending--;
          }
          return { message: encodeMessage(d.message.body) };
        }),
      },
      only: ["grpc.strings.unicode", "grpc.limits.large-message"],
      seed: 3,
      runs: 5,
      reporters: [
        {
          onCheckResult(r) {
            if (r.id !== "grpc.strings.unicode") return;
            pendingAtUnicode = pending;
            release();
          },
        },
      ],
    });
    expect(report.checks.map((c) => [c.id, c.status])).toEqual([
      ["grpc.strings.unicode", "pass"],
      ["grpc.limits.large-message", "pass"],
    ]);
    expect(pendingAtUnicode).toBe(2);
    // Answered after the gate opened, not timed out waiting on it (which would read as a limit at 2 MiB).
    expect(report.checks[1]?.message).toMatch(/no receive limit up to 4 MiB/);
  });
});

describe("grpc.strings.unicode under --concurrency 1", () => {
  it("sends its own bodies only once every size of the probe has been answered", async () => {
    const events: string[] = [];
    const largest = PROBE_SIZES.at(-1) as number;
    const report = await runConformance({
      grpc: {
        address: "memory:in-order",
        inMemory: createInMemoryClient(({ message }) => {
          const d = decodeMessage(message);
          if (!d.ok) return { code: Status.INVALID_ARGUMENT, details: d.reason };
          const probe = d.message.body.length >= 1024 && /^x+$/.test(d.message.body);
          events.push(probe ? `size ${d.message.body.length}` : "own");
          return { message: encodeMessage(d.message.body) };
        }),
      },
      only: ["grpc.strings.unicode"],
      seed: 3,
      runs: 5,
      concurrency: 1,
    });
    expect(report.checks[0]?.status).toBe("pass");
    // The session's own probe of the target may call before the check: the check's calls are those after its probe
    // began.
    const firstSize = events.findIndex((e) => e.startsWith("size"));
    const firstOwn = events.findIndex((e, i) => i > firstSize && e === "own");
    expect(firstSize).toBeGreaterThanOrEqual(0);
    expect(firstOwn).toBeGreaterThan(events.indexOf(`size ${largest}`));
  });
});
