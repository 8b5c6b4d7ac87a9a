// A protocol registered from this file alone: the binary Message POSTed as a plain HTTP body, the status in a header,
// served by a few lines below. The whole catalogue runs over it: what it can judge passes on a correct server and
// fails on a broken one; the checks of gRPC's own wire skip, saying so. Adding a protocol needs no harness edit:
// its CLI flag (--plain, from the module's cli row) is parsed, shown in --help, replayed and run by `check` too.
import { mkdtempSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeMessage, encodeMessage } from "../../../contract/message.js";
import { parseCheckArgs } from "../../../harness/cli/check-options.js";
import { main } from "../../../harness/cli/main.js";
import { rpcTargetsOf } from "../../../harness/cli/rpc-target.js";
import { replayFromOptions } from "../../../harness/index.js";
import { createHttpExchange } from "../../../harness/protocols/http-exchange.js";
import { registerProtocol, type ProtocolModule } from "../../../harness/protocols/index.js";
import { runConformance } from "../../../harness/runner.js";
import { parseRpcUrl } from "../../../harness/targets/address.js";
import { HELLO_PATH, Status } from "../../../harness/protocols/rpc.js";
import { catalogue } from "../../../suites/index.js";
import { withoutProgress } from "../../helpers/cli.js";

/** The toy protocol's client: POST the message's bytes, read the reply's bytes and its x-status header. */
const plain: ProtocolModule = {
  name: "plain",
  cli: { flag: "--plain", value: "url", description: "a target spoken to in plain HTTP bodies (a test's toy)" },
  needsHttp2Handshake: false,
  endpoint: (address, flag) => parseRpcUrl(address, flag),
  createTransport({ conn, url }) {
    const exchange = createHttpExchange({ baseUrl: url as URL, timeoutMs: conn.timeoutMs });
    return {
      async unary(request, options = {}) {
        const timeoutMs = options.deadlineMs ?? conn.timeoutMs;
        const headers = Object.fromEntries(
          Object.entries({ ...conn.metadata, ...options.metadata }).map(([k, v]) => [
            k,
            typeof v === "string" ? v : Buffer.from(v).toString("base64"),
          ]),
        );
        const res = await exchange.exchange({
          path: options.path ?? HELLO_PATH,
          body: request,
          headers,
          timeoutMs,
          channel: options.channel ?? "shared",
          ...(options.signal && { signal: options.signal }),
        });
        if (res.failure?.kind === "timeout")
          return {
            code: Status.DEADLINE_EXCEEDED,
            details: `no answer within ${timeoutMs} ms`,
            headers: {},
            trailers: {},
          };
        if (res.status === undefined)
          return { code: Status.UNAVAILABLE, details: "no response", headers: {}, trailers: {} };
        const code = Number(res.headers["x-status"]?.[0] ?? Status.UNKNOWN);
        return {
          code,
          details: res.headers["x-details"]?.[0] ?? "",
          ...(code === Status.OK && { response: res.body }),
          headers: res.headers,
          trailers: {},
        };
      },
      close: () => exchange.close(),
    };
  },
};

/** The toy server: Hello echoes the body; what does not decode is refused; other paths are unimplemented. */
function serve(hello: (body: string) => string): http.Server {
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const answer = (code: number, body?: Uint8Array, details = "") =>
        res.writeHead(200, { "x-status": String(code), "x-details": details }).end(body);
      if (req.url !== HELLO_PATH) return answer(Status.UNIMPLEMENTED, undefined, "no such method");
      const d = decodeMessage(new Uint8Array(Buffer.concat(chunks)));
      if (!d.ok)
        return answer(/UTF-8/.test(d.reason) ? Status.INVALID_ARGUMENT : Status.INTERNAL, undefined, "bad message");
      return answer(Status.OK, encodeMessage(hello(d.message.body)));
    });
  });
}

const listen = async (server: http.Server) => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

let calls = 0;
const good = serve((body) => body);
/** Broken: its reply depends on how many calls came before. */
const counting = serve((body) => `${body} #${++calls}`);
let goodUrl = "";
let countingUrl = "";
let unregister: () => void = () => {};

/** The CLI in this process, its output kept. */
async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    isTty: false,
    env: {},
  });
  return { code, stdout, stderr };
}

beforeAll(async () => {
  // Before registration the CLI has no such flag: what follows is the registration's doing.
  expect(() => parseCheckArgs(["--plain", "http://127.0.0.1:1"])).toThrow(/unknown option '--plain'/);
  unregister = registerProtocol(plain);
  [goodUrl, countingUrl] = [await listen(good), await listen(counting)];
});
afterAll(async () => {
  unregister();
  await Promise.all([good, counting].map((s) => new Promise((resolve) => s.close(resolve))));
});

const run = (address: string) =>
  runConformance({
    checks: catalogue,
    grpc: { address, protocol: "plain" },
    only: ["grpc.*"],
    seed: 4,
    runs: 20,
    concurrency: 4,
  });

describe("a protocol registered from a test file", () => {
  it("runs the catalogue over it: a correct server passes what the protocol can carry, gRPC's wire checks skip", async () => {
    const report = await run(goodUrl);
    const judged = report.checks.filter((c) => c.status !== "skip");
    expect(judged.length).toBeGreaterThanOrEqual(12);
    expect(
      report.checks.filter((c) => c.status === "fail" || c.status === "error").map((c) => [c.id, c.message]),
    ).toEqual([]);
    const wire = report.checks.filter(
      (c) => catalogue.find((d) => d.id === c.id)?.protocols?.includes("grpc") === true,
    );
    expect(wire.length).toBeGreaterThan(0);
    for (const c of wire)
      expect([c.id, c.status, c.message]).toEqual([c.id, "skip", expect.stringContaining("spoken to in plain")]);
  });

  it("fails a broken server over it on the check that names its defect", async () => {
    const report = await run(countingUrl);
    expect(report.checks.find((c) => c.id === "grpc.stateless.history-independent")?.status).toBe("fail");
  });

  it("refuses a protocol name that is not registered, as a usage error", async () => {
    await expect(
      runConformance({
        checks: catalogue,
        grpc: { address: goodUrl, protocol: "nope" },
        only: ["grpc.unary.single-response"],
        seed: 1,
      }),
    ).rejects.toThrow(/no protocol named nope/);
  });
});

describe("the CLI of a protocol registered from a test file", () => {
  it("parses its flag from the module's row and names it as the run's RPC target", () => {
    const opts = parseCheckArgs(["--plain", "http://127.0.0.1:9", "--grpc", "127.0.0.1:1"]);
    expect(rpcTargetsOf(opts)).toEqual([
      { protocol: "grpc", flag: "--grpc", address: "127.0.0.1:1" },
      { protocol: "plain", flag: "--plain", address: "http://127.0.0.1:9" },
    ]);
  });

  it("names its flag in the replay line of a run started from code, rendered from check's option table", () => {
    const render = replayFromOptions({
      grpc: { address: "http://127.0.0.1:9", protocol: "plain", metadata: { token: "s3cret" } },
      runs: 5,
    });
    expect(render?.({ only: "grpc.unary.single-response", seed: 2 })).toBe(
      "npx example-conformance check --plain http://127.0.0.1:9 --metadata 'token=<METADATA_VALUE>' --runs 5 " +
        "--only grpc.unary.single-response --seed 2",
    );
  });

  it("shows the flag in check --help with the module's text", async () => {
    const { code, stdout } = await cli(["check", "--help"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/--plain <url>\s+a target spoken to in plain HTTP bodies/);
  });

  it(
    "runs `check --plain URL` through the CLI's own option path: passes a correct server, fails a broken one with " +
      "a replay naming the flag",
    async () => {
      const good = await cli([
        "check",
        "--plain",
        goodUrl,
        "--only",
        "grpc.unary.*,grpc.stateless.*",
        "--seed",
        "4",
        "--runs",
        "10",
        "--reporter",
        "json",
      ]);
      expect(withoutProgress(good.stderr)).toBe("");
      const goodReport = JSON.parse(good.stdout) as { checks: { id: string; status: string }[] };
      expect(goodReport.checks.filter((c) => c.status === "pass").length).toBeGreaterThan(0);
      expect(goodReport.checks.filter((c) => c.status === "fail" || c.status === "error")).toEqual([]);
      expect(good.code).toBe(0);

      const broken = await cli([
        "check",
        "--plain",
        countingUrl,
        "--only",
        "grpc.stateless.history-independent",
        "--seed",
        "4",
        "--runs",
        "10",
        "--reporter",
        "json",
      ]);
      expect(broken.code).toBe(1);
      const failed = (
        JSON.parse(broken.stdout) as { checks: { id: string; status: string; replay?: string }[] }
      ).checks.find((c) => c.id === "grpc.stateless.history-independent");
      expect(failed?.status).toBe("fail");
      expect(failed?.replay).toContain(`--plain ${countingUrl}`);
    },
  );

  it("takes its target from the configuration file under the protocol's name, as the built-in protocols' are", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "toy-config-")), "example-conformance.yaml");
    writeFileSync(file, `targets:\n  plain: ${countingUrl}\nonly: [grpc.stateless.history-independent]\n`);
    const run = await cli(["check", "--config", file, "--seed", "4", "--runs", "10", "--reporter", "json"]);
    expect(withoutProgress(run.stderr)).toBe("");
    const report = JSON.parse(run.stdout) as {
      target: { grpc?: string };
      checks: { id: string; status: string; replay?: string }[];
    };
    expect(report.target.grpc).toBe(`${countingUrl} (plain)`);
    // The broken server is what was checked: the file's key reached the protocol's option.
    expect(report.checks.find((c) => c.id === "grpc.stateless.history-independent")?.status).toBe("fail");
    expect(run.code).toBe(1);
  });
});
