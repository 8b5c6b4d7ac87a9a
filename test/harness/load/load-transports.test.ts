// `load --connect`, `--grpc-web` and `--http`: figures and the at-rest versus under-load comparison against the
// exit 1 for a server whose replies change under load, and load shed with 503 + Retry-After counted as shed.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TrackedServer } from "../../../fixtures/_internals/listen-tracked.js";
import { startBusyHttpRpcServer, startSheddingHttpRpcServer } from "../../../fixtures/load/http-rpc-servers.js";
import { startResourceServer, type ResourceServer } from "../../../fixtures/load/http-resource-servers.js";
import type { LoadReport } from "../../../harness/load/load-report.js";
import { startReferenceServer, type ReferenceServer } from "../../../reference-server/start.js";
import { cli } from "../../helpers/cli.js";

let reference: ReferenceServer;
let busy: TrackedServer;
let shedding: TrackedServer;
const out = mkdtempSync(join(tmpdir(), "load-transports-"));

beforeAll(async () => {
  reference = await startReferenceServer({ grpcPort: 0, httpPort: 0 });
  busy = await startBusyHttpRpcServer();
  shedding = await startSheddingHttpRpcServer(2);
});
afterAll(async () => {
  await reference.close();
  await busy.close();
  await shedding.close();
});

describe.each(["connect", "grpc-web"])("load --%s", (protocol) => {
  it("reports figures against the reference, every reply equal to the one at rest, and an SLO verdict", async () => {
    const json = join(out, `${protocol}.json`);
    const run = await cli([
      "load",
      `--${protocol}`,
      reference.httpUrl,
      "--duration",
      "500ms",
      "--concurrency",
      "4",
      "--connections",
      "2",
      "--quiet",
      "--slo",
      "errors<1%",
      "--json",
      json,
    ]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^requests\/s {3}\d+$/m);
    expect(run.stdout).toMatch(/^slo {10}errors<1% +0 % \(0 of \d+ calls\) against 1 %: met$/m);
    const report = JSON.parse(readFileSync(json, "utf8")) as LoadReport;
    expect(report.requests).toBeGreaterThan(0);
    expect(report.errors).toEqual({});
    expect(report.stateless).toMatchObject({ mismatches: 0, compared: report.requests, distinctRequests: 16 });
  });

  it("exits 1 for a server whose replies change under load, showing one", async () => {
    const run = await cli([
      "load",
      `--${protocol}`,
      `http://${busy.address}`,
      "--duration",
      "300ms",
      "--concurrency",
      "4",
      "--connections",
      "2",
      "--quiet",
    ]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /^stateless {4}\d+ of \d+ replies differ from the reply at rest; first: request .*under load [0-9a-f]+$/m,
    );
  });

  it("counts 503 with Retry-After as shed, not as errors", async () => {
    const json = join(out, `${protocol}-shed.json`);
    const run = await cli([
      "load",
      `--${protocol}`,
      `http://${shedding.address}`,
      "--duration",
      "300ms",
      "--concurrency",
      "8",
      "--connections",
      "8",
      "--quiet",
      "--json",
      json,
    ]);
    expect(run.stdout).toMatch(/^errors {7}none$/m);
    expect(run.stdout).toMatch(/^shed {9}RESOURCE_EXHAUSTED \d+ \(refused to shed load, not counted as errors\)$/m);
    expect(run.code).toBe(0);
    const report = JSON.parse(readFileSync(json, "utf8")) as LoadReport;
    expect(report.shed.RESOURCE_EXHAUSTED).toBeGreaterThan(0);
    expect(report.stateless.compared).toBeGreaterThan(0);
  });
});

describe("load's target options", () => {
  it.each([
    [
      ["--connect", "http://127.0.0.1:2", "--grpc", "127.0.0.1:2"],
      /one target a run: --grpc and --connect were both given/,
    ],
    [["--grpc-web", "https://example.com"], /not this machine; a load run elsewhere needs --allow-remote/],
    [["--connect", "not a url"], /--connect not a url: not a valid URL/],
    [["--grpc-web", "http://127.0.0.1:2", "--threads", "2"], /only a gRPC run drives from several threads/],
  ] as [string[], RegExp][])("exits 2 with one line for %j", async (args, message) => {
    const run = await cli(["load", ...args]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toMatch(message);
  });

  it("exits 3 for a Connect target that is not there", async () => {
    const run = await cli(["load", "--connect", "http://127.0.0.1:1", "--duration", "300ms"]);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/^example-conformance: .*http:\/\/127\.0\.0\.1:1.*ECONNREFUSED.*\n$/);
  });
});

describe("load --http", () => {
  let stale: ResourceServer;
  let shedding429: ResourceServer;
  let plain: ResourceServer;
  beforeAll(async () => {
    stale = await startResourceServer({ staleUnderLoad: true });
    shedding429 = await startResourceServer({ shedAbove: 2 });
    plain = await startResourceServer();
  });
  afterAll(async () => {
    await stale.close();
    await shedding429.close();
    await plain.close();
  });

  /** A 300 ms `load --http` of the plain resource server, 2 in flight, at this mix: exit 0 and its JSON report. */
  async function plainMixRun(mix: string) {
    const json = join(out, `http-mix-${mix.replace(/\W/g, "-")}.json`);
    const run = await cli(
      ["load", "--http", `http://${plain.address}`, "--duration", "300ms", "--concurrency", "2"].concat([
        "--mix",
        mix,
        "--quiet",
        "--json",
        json,
      ]),
    );
    expect(run.code, run.stdout).toBe(0);
    return JSON.parse(readFileSync(json, "utf8")) as LoadReport;
  }

  it(
    "drives the documented mix against the reference, every read the message last written, and deletes what it " +
      "created",
    async () => {
      const json = join(out, "http.json");
      const run = await cli([
        "load",
        "--http",
        reference.httpUrl,
        "--duration",
        "500ms",
        "--concurrency",
        "4",
        "--connections",
        "2",
        "--quiet",
        "--json",
        json,
      ]);
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(
        /^mix {10}create=1,read=8,list=1,update=1,delete=1 on http:\/\/127\.0\.0\.1:\d+\/messages: \d+ messages created, every one deleted at the end$/m,
      );
      expect(run.stdout).toMatch(
        /^stateless {4}every one of \d+ reads returned the message last written, on whichever connection$/m,
      );
      const report = JSON.parse(readFileSync(json, "utf8")) as LoadReport;
      expect(report.resources?.created).toBeGreaterThan(0);
      // Reads under load and the closing reads of what the slots held (a loaded machine may leave no time for the
      // first): some were compared, every one the message last written.
      expect(report.stateless.compared).toBeGreaterThan(0);
      expect(report.stateless.mismatches).toBe(0);
      const left = (await (await fetch(`${reference.httpUrl}/messages`)).json()) as { messages: unknown[] };
      expect(left.messages).toEqual([]);
    },
  );

  it("keeps to --mix, and leaves nothing behind on a server of another make", async () => {
    const report = await plainMixRun("create=1,read=1");
    expect(report.mix).toEqual({ create: 1, read: 1, list: 0, update: 0, delete: 0 });
    // Half creates, half reads (the first call of each slot creates), until a slot holds its 64 messages: past that a
    // create deletes one of them instead, so at least the 2 slots' 64 each (a quiet machine gets there in 300 ms).
    expect(report.resources?.created).toBeGreaterThanOrEqual(Math.min(Math.floor(report.requests / 2) - 2, 2 * 64));
    expect(plain.size()).toBe(0);
  });

  it("judges statelessness by reading back what it wrote, even when no read ran under load", async () => {
    // Creates only: no slot reads under load, so before the closing read a run like this judged nothing (exit 1,
    // "statelessness not judged"), as a very short run on a loaded machine did.
    const report = await plainMixRun("create=1");
    expect(report.resources?.created).toBeGreaterThan(0);
    // What the slots hold at the end (at most 64 each: past it a create deletes instead) is read back.
    expect(report.stateless.compared).toBeGreaterThan(0);
    expect(report.stateless.compared).toBeLessThanOrEqual(report.resources?.created ?? 0);
    expect(report.stateless.mismatches).toBe(0);
    expect(plain.size()).toBe(0);
  });

  it("exits 1 for a server whose reads under load return an older version, showing one", async () => {
    const run = await cli([
      "load",
      "--http",
      `http://${stale.address}`,
      "--duration",
      "500ms",
      "--concurrency",
      "6",
      "--mix",
      "create=1,read=4,update=4",
      "--quiet",
    ]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /^stateless {4}\d+ of \d+ reads differ from what was last written; first: GET \/messages\/[0-9a-f-]+: last written "load \d+ \d+", read "load \d+ \d+"$/m,
    );
  });

  it("counts 429 with Retry-After as shed, not as errors", async () => {
    const run = await cli([
      "load",
      "--http",
      `http://${shedding429.address}`,
      "--duration",
      "300ms",
      "--concurrency",
      "8",
      "--connections",
      "8",
      "--quiet",
    ]);
    expect(run.stdout).toMatch(/^errors {7}none$/m);
    expect(run.stdout).toMatch(/^shed {9}HTTP 429 \d+ \(refused to shed load, not counted as errors\)$/m);
    expect(run.code).toBe(0);
  });

  it.each([
    [
      ["--http", "http://127.0.0.1:2", "--mix", "read=1"],
      /--mix <weights>' argument 'read=1' is invalid\. the mix needs create above 0/,
    ],
    [["--http", "http://127.0.0.1:2", "--mix", "create=1,fetch=2"], /"fetch=2" is not op=weight/],
    [["--grpc", "127.0.0.1:2", "--mix", "create=1"], /--mix is for --http runs/],
  ] as [string[], RegExp][])("exits 2 with one line for %j", async (args, message) => {
    const run = await cli(["load", ...args]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
  });

  it("exits 3 for an HTTP target that is not there", async () => {
    const run = await cli(["load", "--http", "http://127.0.0.1:1", "--duration", "300ms"]);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/^example-conformance: cannot reach http:\/\/127\.0\.0\.1:1\/messages: ECONNREFUSED\n$/);
  });
});
