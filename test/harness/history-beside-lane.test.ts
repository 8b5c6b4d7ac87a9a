// The HTTP lane beside the history checks (harness/runner.ts, historyBesideLane): a legal server whose Hello reply
// carries a version of its stored data (part 1, principle 2: a request may depend on earlier ones through the data
// they changed) passes every history check with the HTTP checks storing data beside them, as it does when they run
// after; the lane did run beside them (its writes changed replies the history checks saw), and each check is told to
// the reporters once.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGrpcJsBase, decoded, echo } from "../../fixtures/broken-servers/grpc/_base/grpc-js.js";
import type { StartedServer } from "../../fixtures/broken-servers/grpc/types.js";
import { runConformance } from "../../harness/api/run-conformance.js";
import { startReferenceServer, type ReferenceServer } from "../../reference-server/start.js";

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

let reference: ReferenceServer;
let front: http.Server;
let grpc: StartedServer;
/** Writes the reference's HTTP interface carried out: the version of its stored data. */
let version = 0;
/** The versions the Hello replies carried. */
const versionsSeen = new Set<number>();

beforeAll(async () => {
  reference = await startReferenceServer({ grpcPort: 0, httpPort: 0, log: "silent" });
  const upstream = new URL(reference.httpUrl);
  // In front of the reference's HTTP interface: counts each write it carried out (a 2xx to a method that changes).
  front = http.createServer((req, res) => {
    const out = http.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (reply) => {
        const status = reply.statusCode ?? 502;
        if (!SAFE.has(req.method ?? "GET") && status < 300) version++;
        res.writeHead(status, reply.statusMessage, reply.headers);
        reply.pipe(res);
      },
    );
    out.on("error", () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
  grpc = await startGrpcJsBase({
    hello: (call) => {
      const message = decoded(call.request);
      if (!message) return echo(call.request);
      versionsSeen.add(version);
      return `${message.body} (stored data version ${version})`;
    },
  });
});

afterAll(async () => {
  await grpc?.close();
  await new Promise((resolve) => front?.close(resolve));
  await reference?.close();
});

describe("the HTTP lane beside the history checks", () => {
  it("keeps the history verdicts of a legal server whose reply carries its stored data's version", async () => {
    const told = new Map<string, number>();
    const tell = (c: { id: string }) => void told.set(c.id, (told.get(c.id) ?? 0) + 1);
    const report = await runConformance({
      grpc: { address: grpc.address },
      http: { baseUrl: `http://127.0.0.1:${(front.address() as AddressInfo).port}` },
      only: ["grpc.stateless.*", "http.*"],
      seed: 7,
      runs: 10,
      concurrency: 4,
      reporters: [{ onCheckEnd: tell }],
    });
    const history = report.checks.filter((c) => c.id.startsWith("grpc.stateless."));
    expect(history.length).toBeGreaterThanOrEqual(4);
    for (const c of history)
      expect({ id: c.id, status: c.status }).toEqual({ id: c.id, status: c.id.endsWith("replicas") ? "skip" : "pass" });
    // The lane stored data while history checks were asking: their replies carried more than one version.
    expect(versionsSeen.size).toBeGreaterThan(1);
    expect(report.checks.some((c) => c.id.startsWith("http.") && c.status === "pass")).toBe(true);
    for (const c of report.checks) expect([c.id, told.get(c.id)]).toEqual([c.id, 1]);
  }, 120_000);
});
