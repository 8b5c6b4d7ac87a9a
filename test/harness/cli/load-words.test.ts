// `load`'s words: its help names every target and `merge`, and its summary says properly what an --http run left.
import { describe, expect, it } from "vitest";
import { formatLoadReport } from "../../../harness/reporters/load-console.js";
import type { LoadReport } from "../../../harness/load/load-report.js";
import { cli } from "../../helpers/cli.js";

const figures = { p50: 1, p90: 1, p99: 1, "p99.9": 1, max: 1, mean: 1 };

/** An --http run's report with the messages it created and could not delete. */
const httpRun = (created: number, leftBehind: number): LoadReport =>
  ({
    target: "http://127.0.0.1:1",
    durationMs: 1000,
    concurrency: 1,
    connections: 1,
    threads: 1,
    requests: 0,
    requestsPerSecond: 0,
    latencyMs: figures,
    errors: {},
    shed: {},
    stateless: { distinctRequests: 0, compared: 0, mismatches: 0 },
    interrupted: false,
    slo: [],
    histograms: { unit: "microseconds", latency: "" },
    mix: { create: 1, read: 8 },
    resources: { collection: "/messages", created, leftBehind },
  }) as LoadReport;

const mixLine = (r: LoadReport) =>
  formatLoadReport(r, false)
    .split("\n")
    .find((l) => l.startsWith("mix ")) ?? "";

describe("load's words", () => {
  it("--help and the command list name --http and `load merge` in load's summary", async () => {
    const help = await cli(["load", "--help"]);
    const summary = help.stdout
      .slice(help.stdout.indexOf("\n\n") + 2, help.stdout.indexOf("Options:"))
      .replace(/\s+/g, " ");
    expect(summary).toMatch(/--http/);
    expect(summary).toMatch(/load merge/);
    const list = (await cli(["--help"])).stdout.replace(/\s+/g, " ");
    expect(list).toMatch(/load \[options\] load a server .*--http.*load merge/);
  });

  it("says no message was created, and nothing of deleting, when an --http run created none", () => {
    expect(mixLine(httpRun(0, 0))).toMatch(/on \/messages: no message created, so none to delete$/);
    expect(mixLine(httpRun(0, 0))).not.toMatch(/every one deleted|0 messages/);
  });

  it("counts one message as one, and says how many could not be deleted", () => {
    expect(mixLine(httpRun(1, 0))).toMatch(/: 1 message created, deleted at the end$/);
    expect(mixLine(httpRun(12, 0))).toMatch(/: 12 messages created, every one deleted at the end$/);
    expect(mixLine(httpRun(12, 3))).toMatch(/: 12 messages created, 3 could not be deleted$/);
  });

  it("names every HTTP version a merged report's runs spoke, not only a single one", () => {
    const first = (r: LoadReport) => formatLoadReport(r, false).split("\n")[0] ?? "";
    const one = { ...httpRun(0, 0), httpVersion: "2", httpVersions: ["2"] } as LoadReport;
    expect(first(one)).toMatch(/connections, HTTP\/2\)/);
    const mixed = { ...httpRun(0, 0), httpVersions: ["1.1", "2"], mergedFrom: ["a", "b"] } as LoadReport;
    expect(first(mixed)).toMatch(/connections, HTTP\/1\.1 and HTTP\/2\)/);
  });
});
