// `load merge` carries what each run says of its transport and its memory: the HTTP versions its runs spoke, and the
// worst memory growth among them with the run it came from (harness/load/merge.ts). Reports are written as `load
// --json` writes them (buildLoadReport), then merged, and the merged report merged again.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { newHistogram } from "../../../harness/load/_internals/drive.js";
import { buildLoadReport, type LoadReport } from "../../../harness/load/load-report.js";
import { memoryGrowth } from "../../../harness/load/memory-growth.js";
import { mergeLoadReports } from "../../../harness/load/merge.js";

const dir = mkdtempSync(join(tmpdir(), "merge-memory-"));

/** A run's report file: its HTTP version when it names one, and its memory samples (rising by `rise` MiB). */
function reportFile(name: string, httpVersion: "1.1" | "2" | undefined, rise: number, heapRise = 0): string {
  const histogram = newHistogram();
  histogram.recordValue(1000);
  const memory = {
    rssMiB: [90, 90 + rise / 2, 90 + rise],
    heapUsedMiB: [12, 12, 12 + heapRise],
  };
  const report = buildLoadReport({
    target: `http://127.0.0.1:1/${name}`,
    durationMs: 3000,
    concurrency: 4,
    connections: 4,
    ...(httpVersion && { httpVersion }),
    threads: 1,
    requests: 1,
    histogram,
    errors: {},
    stateless: { distinctRequests: 1, compared: 1, mismatches: 0 },
    interrupted: false,
    slo: [],
    memory: { ...memory, growthMiB: memoryGrowth(memory) },
  });
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(report));
  return file;
}

describe("load merge: HTTP versions and memory", () => {
  it("says every HTTP version its runs spoke, and the worst memory growth with the run it came from", async () => {
    const h1 = reportFile("h1", "1.1", 4, 6);
    const h2 = reportFile("h2", "2", 12, 1);
    const grpc = reportFile("grpc", undefined, 2);
    const merged = await mergeLoadReports([h1, h2, grpc], []);
    expect(merged.httpVersions).toEqual(["1.1", "2"]);
    expect(merged.httpVersion).toBeUndefined();
    // Resident set: h2's 12 MiB (90 → 102), the worst; heap: h1's 6, the worst of another run.
    expect(merged.memory).toEqual({ growthMiB: { rss: 12, heapUsed: 6 }, worstRun: h2 });

    const again = join(dir, "merged.json");
    writeFileSync(again, JSON.stringify(merged));
    const twice = await mergeLoadReports([again, reportFile("h1b", "1.1", 1)], []);
    expect(twice.httpVersions).toEqual(["1.1", "2"]);
    expect(twice.memory).toEqual({ growthMiB: { rss: 12, heapUsed: 6 }, worstRun: again });
  });

  it("keeps httpVersion when every run spoke the same one, and no memory when no run measured it", async () => {
    const a = reportFile("a", "2", 1);
    const b = reportFile("b", "2", 3);
    const merged = await mergeLoadReports([a, b], []);
    expect(merged).toMatchObject({ httpVersion: "2", httpVersions: ["2"], memory: { worstRun: b } });

    const bare = JSON.parse(JSON.stringify(merged)) as LoadReport;
    delete bare.memory;
    delete bare.httpVersion;
    delete bare.httpVersions;
    const file = join(dir, "bare.json");
    writeFileSync(file, JSON.stringify(bare));
    const plain = await mergeLoadReports([file], []);
    expect(plain.memory).toBeUndefined();
    expect(plain.httpVersions).toBeUndefined();
  });

  it("works a run's growth out from its samples, not from what the file says of it", async () => {
    const file = reportFile("claims", "1.1", 8);
    const report = JSON.parse(JSON.stringify(await mergeLoadReports([file], []))) as LoadReport;
    expect(report.memory?.growthMiB.rss).toBe(8);
    const lying = {
      ...report,
      memory: { rssMiB: [90, 94, 98], heapUsedMiB: [1, 1, 1], growthMiB: { rss: 0, heapUsed: 0 } },
    };
    writeFileSync(file, JSON.stringify(lying));
    expect((await mergeLoadReports([file], [])).memory?.growthMiB).toEqual({ rss: 8, heapUsed: 0 });
  });

  it.each([
    ["a sample that is not a number", { rssMiB: ["80"], heapUsedMiB: [1] }, /\/memory\/rssMiB\/0 must be number/],
    ["an HTTP version no run speaks", undefined, /\/httpVersion must be equal to one of the allowed values/],
  ])("refuses a report with %s (usage)", async (_what, memory, message) => {
    const file = reportFile("hostile", "1.1", 1);
    const report = JSON.parse(JSON.stringify(await mergeLoadReports([file], []))) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify(memory ? { ...report, memory } : { ...report, httpVersion: "3" }));
    await expect(mergeLoadReports([file], [])).rejects.toThrow(message);
  });
});
