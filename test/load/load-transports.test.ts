// `load --connect` and `load --grpc-web`: figures and the at-rest versus under-load comparison against the reference,
// exit 1 for a server whose replies change under load, and load shed with 503 + Retry-After counted as shed.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TrackedServer } from "../../fixtures/_internals/listen-tracked.js";
import { startBusyHttpRpcServer, startSheddingHttpRpcServer } from "../../fixtures/load/http-rpc-servers.js";
import type { LoadReport } from "../../harness/load/load-report.js";
import { startReferenceServer, type ReferenceServer } from "../../reference-server/start.js";
import { cli } from "../helpers/cli.js";

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
    const run = await cli(["load", `--${protocol}`, reference.httpUrl, "--duration", "500ms", "--concurrency", "4", "--connections", "2", "--quiet", "--slo", "errors<1%", "--json", json]);
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
    const run = await cli(["load", `--${protocol}`, `http://${busy.address}`, "--duration", "300ms", "--concurrency", "4", "--connections", "2", "--quiet"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^stateless {4}\d+ of \d+ replies differ from the reply at rest; first: request .*under load [0-9a-f]+$/m);
  });

  it("counts 503 with Retry-After as shed, not as errors", async () => {
    const json = join(out, `${protocol}-shed.json`);
    const run = await cli(["load", `--${protocol}`, `http://${shedding.address}`, "--duration", "300ms", "--concurrency", "8", "--connections", "8", "--quiet", "--json", json]);
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
    [["--connect", "http://127.0.0.1:2", "--grpc", "127.0.0.1:2"], /one target a run: --grpc and --connect were both given/],
    [["--grpc-web", "https://example.com"], /not this machine; a load run elsewhere needs --allow-remote/],
    [["--connect", "not a url"], /--connect not a url: not a URL/],
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
