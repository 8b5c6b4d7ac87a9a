// `load --connect` and `--grpc-web` at the same calls in flight as `load --grpc`: over HTTP/2 where the server offers
// it (h2 by ALPN over TLS, h2c by prior knowledge when asked), the calls spread over --connections sessions; over
// HTTP/1.1 on a connection per call in flight. The reference's HTTP port speaks HTTP/1.1 alone, so the HTTP/2 runs go
// through an HTTP/2 front to it (as a deployment's proxy would be): every reply is still the reference's, and the
// front counts what arrived over HTTP/2. A plain TCP front counts the HTTP/1.1 connections accepted. The same servers
// bound what load's callers keep per call on every transport: retained memory after a full GC, between two counts of
// calls of one run, driven in a process of its own (the compiled harness) so that the servers here weigh nothing.
import { mkdtempSync, readFileSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFile } from "node:child_process";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LoadReport } from "../../../harness/load/load-report.js";
import type { DriveSpec } from "../../../harness/load/_internals/drive.js";
import { PACKAGE_ROOT } from "../../../common/paths.js";
import { startReferenceServer, type ReferenceServer } from "../../../reference-server/start.js";
import { cli } from "../../helpers/cli.js";
import { selfSignedCert, tlsFront } from "../../helpers/tls.js";

let reference: ReferenceServer;
const cert = selfSignedCert();
const out = mkdtempSync(join(tmpdir(), "load-http2-"));
/** Requests the HTTP/2 fronts received over HTTP/2 and over HTTP/1.1, and HTTP/2 sessions they accepted. */
const seen = { h2Requests: 0, h1Requests: 0, h2Sessions: 0 };
/** Connections the TCP front accepted. */
let accepted = 0;
const closers: (() => Promise<unknown>)[] = [];

const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "host"]);
const forwarded = (headers: http.IncomingHttpHeaders | http2.IncomingHttpHeaders) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !name.startsWith(":") && !HOP_BY_HOP.has(name)));

/** Each request forwarded to the reference's HTTP/1.1 port on a keep-alive connection, its reply sent back as is. */
function forwarder(port: number) {
  const agent = new http.Agent({ keepAlive: true });
  closers.push(async () => agent.destroy());
  return (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => {
    if (req.httpVersionMajor === 2) seen.h2Requests++;
    else seen.h1Requests++;
    const up = http.request(
      { host: "127.0.0.1", port, method: req.method, path: req.url, headers: forwarded(req.headers), agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, forwarded(answer.headers));
        answer.pipe(res);
      },
    );
    up.on("error", () => res.stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
    req.pipe(up);
  };
}

async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return (server.address() as net.AddressInfo).port;
}

let h2cPort: number;
/** An h2c server whose every reply is 2 MiB, past load's 1 MiB bound on a reply. */
let hugePort: number;
let h2TlsPort: number;
let tcpPort: number;
let h1Tls: Awaited<ReturnType<typeof tlsFront>>;

beforeAll(async () => {
  reference = await startReferenceServer({ grpcPort: 0, httpPort: 0 });
  const port = Number(new URL(reference.httpUrl).port);
  const sessions = new Set<http2.ServerHttp2Session>();
  const track = (server: http2.Http2Server | http2.Http2SecureServer) =>
    server.on("session", (s: http2.ServerHttp2Session) => {
      seen.h2Sessions++;
      sessions.add(s);
      s.on("close", () => sessions.delete(s));
    });
  h2cPort = await listen(track(http2.createServer(forwarder(port))));
  // Offers h2 and http/1.1 by ALPN, as a TLS front usually does: the client's offer decides.
  h2TlsPort = await listen(
    track(http2.createSecureServer({ cert: cert.cert, key: cert.key, allowHTTP1: true }, forwarder(port))),
  );
  closers.unshift(async () => {
    for (const s of sessions) s.destroy();
  });
  const tcp = net.createServer((client) => {
    accepted++;
    const upstream = net.connect(port, "127.0.0.1");
    for (const s of [client, upstream]) s.on("error", () => s.destroy());
    client.pipe(upstream).pipe(client);
  });
  tcpPort = await listen(tcp);
  const huge = Buffer.alloc(2 * 1024 * 1024, 0x61);
  hugePort = await listen(
    track(http2.createServer((_req, res) => res.writeHead(200, { "content-type": "application/proto" }).end(huge))),
  );
  h1Tls = await tlsFront(port, cert);
});
afterAll(async () => {
  for (const close of closers) await close();
  await h1Tls.close();
  await reference.close();
});

/** A short run at 6 calls in flight over 2 connections, its report read first so that a failure names its reason. */
async function run(
  protocol: string,
  url: string,
  ...extra: string[]
): Promise<{ code: number; stdout: string; report: LoadReport }> {
  const json = join(out, `${protocol}-${Date.now()}.json`);
  const r = await cli([
    "load",
    `--${protocol}`,
    url,
    "--duration",
    "500ms",
    "--concurrency",
    "6",
    "--connections",
    "2",
    "--quiet",
    "--json",
    json,
    ...extra,
  ]);
  expect(r.stderr).toBe("");
  const report = JSON.parse(readFileSync(json, "utf8")) as LoadReport;
  expect(report.errors).toEqual({});
  expect(report.stateless).toMatchObject({ mismatches: 0, compared: report.requests });
  expect(r.code).toBe(0);
  return { code: r.code, stdout: r.stdout, report };
}

describe.each(["connect", "grpc-web"])("load --%s", (protocol) => {
  it("speaks h2c by prior knowledge when asked, the calls over --connections sessions", async () => {
    const before = { ...seen };
    const { stdout, report } = await run(protocol, `http://127.0.0.1:${h2cPort}`, "--http2-prior-knowledge");
    expect(report).toMatchObject({ httpVersion: "2", connections: 2, concurrency: 6 });
    expect(stdout).toMatch(/\(6 in flight over 2 connections, HTTP\/2\)/);
    // Every call and the 16 at rest came over HTTP/2: the run's 2 sessions and the one at rest.
    expect(seen.h2Requests - before.h2Requests).toBe(report.requests + 16);
    expect(seen.h2Sessions - before.h2Sessions).toBe(3);
    expect(seen.h1Requests).toBe(before.h1Requests);
    expect(report.memory?.rssMiB?.length).toBeGreaterThan(0);
    expect(report.memory?.growthMiB).toEqual({ rss: expect.any(Number), heapUsed: expect.any(Number) });
    expect(report.memory?.heapAfterMarkCompactMiB).toEqual(expect.any(Array));
  });

  it("speaks h2 over TLS when the server picks it by ALPN (--ca trusted)", async () => {
    const before = { ...seen };
    const { report } = await run(protocol, `https://localhost:${h2TlsPort}`, "--ca", cert.certFile);
    expect(report).toMatchObject({ httpVersion: "2", connections: 2 });
    expect(seen.h2Requests - before.h2Requests).toBe(report.requests + 16);
    expect(seen.h1Requests).toBe(before.h1Requests);
  });
});

describe("load over HTTP/1.1", () => {
  it("uses a connection per call in flight, whatever --connections says", async () => {
    const before = accepted;
    const { stdout, report } = await run("connect", `http://127.0.0.1:${tcpPort}`);
    expect(report).toMatchObject({ httpVersion: "1.1", connections: 6 });
    expect(stdout).toMatch(/\(6 in flight over 6 connections, HTTP\/1\.1\)/);
    // One at rest, then the 6 calls started at once, each on a connection of its own.
    expect(accepted - before).toBeGreaterThanOrEqual(7);
  });

  it("speaks HTTP/1.1 over TLS when the server offers nothing else by ALPN", async () => {
    const { report } = await run("grpc-web", `https://localhost:${h1Tls.port}`, "--ca", cert.certFile);
    expect(report).toMatchObject({ httpVersion: "1.1", connections: 6 });
  });

  it("names h2c when a server asked for it by prior knowledge does not speak it (exit 3, one line)", async () => {
    const r = await cli([
      "load",
      "--connect",
      reference.httpUrl,
      "--http2-prior-knowledge",
      "--duration",
      "300ms",
      "--quiet",
    ]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/^example-conformance: http:\/\/127\.0\.0\.1:\d+: Hello at rest failed [^\n]*\n$/);
    expect(r.stderr).toContain("(--http2-prior-knowledge: does it speak HTTP/2 without TLS?)");
  });

  it("reads an HTTP/2 reply no further than its 1 MiB bound (exit 3, one line)", async () => {
    const r = await cli([
      "load",
      "--connect",
      `http://127.0.0.1:${hugePort}`,
      "--http2-prior-knowledge",
      "--duration",
      "300ms",
      "--quiet",
    ]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(
      /^example-conformance: [^\n]*Hello at rest failed [^\n]*a reply past 1048576 bytes[^\n]*\n$/,
    );
  });

  it.each([
    [["--grpc", "127.0.0.1:2"], /--http2-prior-knowledge: it is for --connect and --grpc-web, not --grpc/],
    [
      ["--connect", "https://127.0.0.1:2"],
      /--http2-prior-knowledge: over TLS the server picks the HTTP version by ALPN/,
    ],
  ] as [string[], RegExp][])("refuses --http2-prior-knowledge with %j (exit 2)", async (args, message) => {
    const r = await cli(["load", ...args, "--http2-prior-knowledge"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});

/**
 * Calls of one run between the two measures: past warm-up (JIT, pools, sessions: about 300 KiB in the first 2,000
 * calls), and enough to show a per-call leak.
 */
const FROM_CALLS = 1000;
const TO_CALLS = 4000;

const dist = (path: string) => JSON.stringify(pathToFileURL(join(PACKAGE_ROOT, "dist", path)).href);

/**
 * The process that drives the calls: 16 in flight over 4 connections, bounded by count (TO_CALLS) and, as a
 * backstop, by time; after FROM_CALLS calls and after TO_CALLS, a full GC and the bytes still held (V8's heap and
 * Buffers), taken between two calls. It prints the growth and what the run counted.
 */
const DRIVER = `
import { drive } from ${dist("harness/load/_internals/drive.js")};
import { resolveLoadOptions } from ${dist("harness/run-config.js")};
import { encodeFrames } from ${dist("harness/protocols/grpc/index.js")};
import { encodeMessage } from ${dist("common/message.js")};
const [protocol, address, extra] = process.argv.slice(1);
const bodies = ["", "memory 1", "memory 2 é"];
const spec = {
  address: resolveLoadOptions({ protocol, address }).endpoint.address,
  requests: bodies.map((b) => encodeFrames([{ compressed: false, data: encodeMessage(b) }])),
  bodies,
  atRest: bodies.map(() => null),
  concurrency: 16,
  connections: 4,
  timeoutMs: 30000,
  durationMs: 100000,
  ...JSON.parse(extra),
};
const held = () => (gc(), process.memoryUsage().heapUsed + process.memoryUsage().external);
const progress = new Int32Array(2);
let from;
let growth;
const stopped = () => {
  const calls = Atomics.load(progress, 0);
  if (from === undefined && calls >= ${FROM_CALLS}) from = held();
  else if (from !== undefined && growth === undefined && calls >= ${TO_CALLS}) growth = held() - from;
  return growth !== undefined;
};
const r = await drive(spec, stopped, progress);
console.log(JSON.stringify({ growth, requests: r.requests, errors: r.errors }));
`;

async function retainedGrowth(protocol: string, address: string, extra: Partial<DriveSpec>) {
  const args = ["--expose-gc", "--input-type=module", "-e", DRIVER, protocol, address, JSON.stringify(extra)];
  const stdout = await new Promise<string>((resolve, reject) =>
    execFile(process.execPath, args, { timeout: 110_000 }, (err, out, stderr) =>
      err ? reject(new Error(`${err.message}: ${stderr}`)) : resolve(out),
    ),
  );
  return JSON.parse(stdout) as { growth: number; requests: number; errors: Record<string, number> };
}

/**
 * At most 768 KiB kept from the first measure to the second, 262 bytes a call: a call's reply, request or closure kept
 * is more. Measured 3,000 calls apart: 85 KiB (gRPC), 184 KiB (Connect over HTTP/1.1), with Buffers of the calls in
 * flight swinging by up to 180 KiB from one measure to the next.
 */
const MAX_GROWTH = 768 * 1024;

describe("load's callers keep nothing per call (retained memory after a full GC, 3,000 calls apart)", () => {
  const connect = (version: "1.1" | "2", baseUrl: string) => ({ http: { protocol: "connect", baseUrl, version } });
  const h2c = () => `http://127.0.0.1:${h2cPort}`;
  it.each([
    ["grpc", "gRPC (the raw HTTP/2 client)", () => reference.grpcAddress, () => ({})],
    ["connect", "Connect over HTTP/1.1", () => reference.httpUrl, () => connect("1.1", reference.httpUrl)],
    ["connect", "Connect over h2c", h2c, () => connect("2", h2c())],
  ] as [string, string, () => string, () => Partial<DriveSpec>][])(
    "%s: %s",
    async (protocol, _name, address, extra) => {
      const r = await retainedGrowth(protocol, address(), extra());
      expect(r.errors).toEqual({});
      expect(r.requests).toBeGreaterThanOrEqual(TO_CALLS);
      expect(r.growth).toBeLessThan(MAX_GROWTH);
    },
    120_000,
  );
});
