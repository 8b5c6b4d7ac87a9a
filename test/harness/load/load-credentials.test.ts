// `load` over TLS and with credentials, as `check` takes them: https:// URLs trusted with --ca (a self-signed
// certificate in front of the reference), the API key of an HTTP store that requires one (exit 5 without it, before
// the run; never printed), and metadata sent as headers on every Connect call.
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LoadReport } from "../../../harness/load/load-report.js";
import { startReferenceServer, type ReferenceServer } from "../../../reference-server/start.js";
import { cli } from "../../helpers/cli.js";
import { selfSignedCert, tlsFront } from "../../helpers/tls.js";

const KEY = "load-secret-7f3a9c";
let reference: ReferenceServer;
let keyed: ReferenceServer;
let front: Awaited<ReturnType<typeof tlsFront>>;
let metadataSeen: Server;
const seen: (string | undefined)[] = [];
const cert = selfSignedCert();
const out = mkdtempSync(join(tmpdir(), "load-credentials-"));

beforeAll(async () => {
  reference = await startReferenceServer({ grpcPort: 0, httpPort: 0 });
  keyed = await startReferenceServer({ grpcPort: 0, httpPort: 0, apiKey: KEY });
  front = await tlsFront(Number(new URL(reference.httpUrl).port), cert);
  // Answers Connect's Hello with an empty message, noting the credentials header of every call.
  metadataSeen = createServer((req, res) => {
    seen.push(req.headers["x-token"] as string | undefined);
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/proto" }).end());
  });
  await new Promise<void>((resolve) => metadataSeen.listen(0, "127.0.0.1", resolve));
});
afterAll(async () => {
  await front.close();
  await reference.close();
  await keyed.close();
  await new Promise((resolve) => metadataSeen.close(resolve));
});

const tlsUrl = () => `https://localhost:${front.port}`;

describe("load over TLS", () => {
  it.each(["connect", "http"])("--%s https:// with --ca: figures and no errors", async (transport) => {
    const json = join(out, `tls-${transport}.json`);
    // 1 s: on a loaded machine a TLS run of 400 ms could end before any slot read back what it created (exit 1,
    // "statelessness not judged"), which says nothing of TLS. The report is read first, so a failure names its reason.
    const run = await cli([
      "load",
      `--${transport}`,
      tlsUrl(),
      "--ca",
      cert.certFile,
      "--duration",
      "1s",
      "--concurrency",
      "4",
      "--connections",
      "2",
      "--quiet",
      "--json",
      json,
    ]);
    expect(run.stderr).toBe("");
    const report = JSON.parse(readFileSync(json, "utf8")) as LoadReport;
    expect(report.requests).toBeGreaterThan(0);
    expect(report.errors).toEqual({});
    expect(report.stateless.mismatches).toBe(0);
    expect(report.stateless.compared).toBeGreaterThan(0);
    expect(run.code).toBe(0);
  });

  it("refuses a certificate it was not told to trust, in one line (exit 3)", async () => {
    const run = await cli(["load", "--connect", tlsUrl(), "--duration", "300ms", "--quiet"]);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/self[- ]signed/);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("refuses --ca on an http:// URL as a usage error", async () => {
    const run = await cli(["load", "--connect", reference.httpUrl, "--ca", cert.certFile, "--duration", "300ms"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/needs an https:\/\/ URL/);
  });
});

describe("load --http with an API key", () => {
  it("exits 5 before the run when the store wants a key not given", async () => {
    const run = await cli(["load", "--http", keyed.httpUrl, "--duration", "300ms", "--quiet"]);
    expect(run.code).toBe(5);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/wants credentials .*--api-key/);
  });

  it("exits 5 naming where the key goes when it is sent elsewhere, without printing it", async () => {
    const run = await cli([
      "load",
      "--http",
      keyed.httpUrl,
      "--api-key",
      KEY,
      "--api-key-in",
      "bearer",
      "--duration",
      "300ms",
      "--quiet",
    ]);
    expect(run.code).toBe(5);
    expect(run.stderr).toMatch(/--api-key-in header:X-API-Key/);
    expect(run.stdout + run.stderr).not.toContain(KEY);
  });

  it("with the key: figures, no errors, and the key in no output", async () => {
    const json = join(out, "keyed.json");
    const run = await cli([
      "load",
      "--http",
      keyed.httpUrl,
      "--api-key",
      KEY,
      "--duration",
      "400ms",
      "--concurrency",
      "4",
      "--json",
      json,
    ]);
    // The summary names why a run failed (a short run on a loaded machine: "stateless    not judged").
    expect(run.code, run.stdout).toBe(0);
    const report = JSON.parse(readFileSync(json, "utf8")) as LoadReport;
    expect(report.requests).toBeGreaterThan(0);
    expect(report.errors).toEqual({});
    expect(report.resources?.leftBehind).toBe(0);
    expect(run.stdout + run.stderr + readFileSync(json, "utf8")).not.toContain(KEY);
  });

  it("takes the key from EXAMPLE_API_KEY", async () => {
    const run = await cli(["load", "--http", keyed.httpUrl, "--duration", "300ms", "--quiet"], {
      EXAMPLE_API_KEY: KEY,
    });
    expect(run.code, run.stdout).toBe(0);
    expect(run.stdout).toMatch(/^errors {7}none$/m);
  });
});

describe("load --connect --metadata", () => {
  it("sends the metadata as a header on every call, and never prints it", async () => {
    seen.length = 0;
    const address = metadataSeen.address() as { port: number };
    const run = await cli([
      "load",
      "--connect",
      `http://127.0.0.1:${address.port}`,
      "--metadata",
      `x-token=${KEY}`,
      "--duration",
      "300ms",
      "--concurrency",
      "2",
      "--quiet",
    ]);
    expect(run.code).toBe(0);
    expect(seen.length).toBeGreaterThan(16);
    expect(seen.every((v) => v === KEY)).toBe(true);
    expect(run.stdout + run.stderr).not.toContain(KEY);
  });

  it("refuses --metadata with --http and --api-key with --connect", async () => {
    expect((await cli(["load", "--http", reference.httpUrl, "--metadata", "a=b"])).code).toBe(2);
    expect((await cli(["load", "--connect", reference.httpUrl, "--api-key", "k"])).code).toBe(2);
  });
});
