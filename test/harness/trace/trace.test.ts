// check --trace DIR: the exchanges that decided each failing or erring check, written as HAR (HTTP, Connect,
// gRPC-Web) or as a gRPC frame trace, bounded and inert; passing checks write nothing.
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeMessage } from "../../../contract/message.js";
import { server as create200 } from "../../../fixtures/broken-servers/http/create-200.js";
import type { StartedHttpServer } from "../../../fixtures/broken-servers/http/types.js";
import { server as twoReplies } from "../../../fixtures/broken-servers/grpc/two-replies.js";
import { RAW_BYTES_FORBIDDEN } from "../../../fixtures/hostile-targets/payloads.js";
import { startHostileGrpcText, startHostileHttpText } from "../../../fixtures/hostile-targets/text-channels.js";
import type { TrackedServer } from "../../../fixtures/_internals/listen-tracked.js";
import type { RunReport } from "../../../harness/report.js";
import type { TraceSink } from "../../../harness/trace/exchange-record.js";
import { createTraceWriter } from "../../../harness/trace/trace-writer.js";
import { frame } from "../../../harness/protocols/grpc-web/index.js";
import { createGrpcTarget } from "../../../harness/targets/create-grpc-target.js";
import { runCliProcess } from "../../helpers/cli-process.js";
import { withoutProgress } from "../../helpers/cli.js";

interface Har {
  log: {
    version: string;
    comment?: string;
    entries: {
      request: {
        method: string;
        url: string;
        headers: { name: string; value: string }[];
        postData?: { text: string; encoding?: string; _decoded?: unknown };
      };
      response: {
        status: number;
        statusText: string;
        headers: { name: string; value: string }[];
        content: { size: number; text?: string; encoding?: string; comment?: string; _decoded?: unknown };
      };
    }[];
  };
}

const tmp = mkdtempSync(join(tmpdir(), "trace-"));
/** A key the run sends on every HTTP request: no trace may hold it. */
const SECRET = "trace-secret-key-7f3a";
const readReport = (file: string) => JSON.parse(readFileSync(file, "utf8")) as RunReport;
const traced = (report: RunReport) => report.checks.filter((c) => c.trace !== undefined);

describe("check --trace DIR of a broken HTTP server (POST answers 200)", () => {
  let server: StartedHttpServer;
  let report: RunReport;
  const dir = join(tmp, "http");
  beforeAll(async () => {
    server = await create200.start();
    const json = join(tmp, "http.json");
    // The trace folder is named relative to the report's folder (tmp), as the HTML report links it.
    const run = await runCliProcess(
      ["check", "--http", server.url, "--seed", "1", "--trace", dir, "--report-json", json],
      { EXAMPLE_API_KEY: SECRET },
    );
    expect(withoutProgress(run.stderr)).toBe("");
    expect(run.code).toBe(1);
    report = readReport(json);
  }, 60_000);
  afterAll(() => server?.close());

  it("writes one HAR 1.2 file per failing check, which parses and holds the failing exchange", () => {
    const failed = report.checks.filter((c) => c.status === "fail" || c.status === "error").map((c) => c.id);
    expect(failed).toContain("http.create.status-201");
    expect(
      traced(report)
        .map((c) => c.id)
        .sort(),
    ).toEqual(failed.sort());
    const check = report.checks.find((c) => c.id === "http.create.status-201");
    expect(check?.trace).toBe(join(dir, "http.create.status-201.har"));
    const har = JSON.parse(readFileSync(check?.trace as string, "utf8")) as Har;
    expect(har.log.version).toBe("1.2");
    expect(har.log.comment).toContain("http.create.status-201 (fail)");
    expect(har.log.entries.length).toBeGreaterThan(0);
    for (const e of har.log.entries) {
      expect(e.request.method).toMatch(/^[A-Z]+$/);
      expect(e.request.url.startsWith(server.url)).toBe(true);
      expect(typeof e.response.status).toBe("number");
    }
    const creating = har.log.entries.find((e) => e.request.method === "POST" && e.response.status === 200);
    expect(creating?.request.postData?.text).toMatch(/^\{"body":/);
    expect(creating?.response.statusText).toBe("OK");
    expect(creating?.response.content.text).toMatch(/"id":/);
  });

  it("shows the run's API key as its placeholder, never the key", () => {
    const text = readdirSync(dir)
      .map((f) => readFileSync(join(dir, f), "utf8"))
      .join("\n");
    expect(text).not.toContain(SECRET);
    const har = JSON.parse(readFileSync(join(dir, "http.create.status-201.har"), "utf8")) as Har;
    expect(har.log.entries[0]?.request.headers).toContainEqual({ name: "x-api-key", value: "<API_KEY>" });
  });

  it("refuses a DIR that cannot be a folder: exit 2, one line, before anything is sent", async () => {
    const run = await runCliProcess([
      "check",
      "--http",
      "http://127.0.0.1:1",
      "--trace",
      join(dir, "http.maturity.har", "sub"),
    ]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/^example-conformance: --trace \S+: cannot make a folder there \(ENOTDIR\)\n$/);
  });

  it("writes nothing for the checks that passed or were skipped", () => {
    const files = readdirSync(dir).sort();
    expect(files).toEqual(
      traced(report)
        .map((c) => `${c.id}.har`)
        .sort(),
    );
    expect(report.checks.filter((c) => c.status === "pass").length).toBeGreaterThan(10);
  });
});

describe("check --trace DIR of a gRPC server that sends two replies to a unary call", () => {
  it("writes the frame trace: HEADERS, each DATA frame by length with its message, the trailers", async () => {
    const server = await twoReplies.start();
    try {
      const cwd = mkdtempSync(join(tmp, "grpc-"));
      const json = join(cwd, "report", "r.json");
      const run = await runCliProcess([
        "check",
        "--grpc",
        server.address,
        "--only",
        "grpc.unary.single-response",
        "--seed",
        "1",
        "--trace",
        join(cwd, "traces"),
        "--report-json",
        json,
      ]);
      expect(run.code).toBe(1);
      const check = readReport(json).checks.find((c) => c.id === "grpc.unary.single-response");
      expect(check?.status).toBe("fail");
      const text = readFileSync(check?.trace as string, "utf8");
      expect(check?.trace).toMatch(/grpc\.unary\.single-response\.grpc\.txt$/);
      expect(text).toMatch(/^# example-conformance trace: grpc\.unary\.single-response \(fail\)$/m);
      expect(text).toMatch(/^> HEADERS$/m);
      expect(text).toMatch(/^> {3}:path: \/example\.exampleService\/Hello$/m);
      expect(text).toMatch(/^< HEADERS :status 200$/m);
      expect(text).toMatch(/^< DATA \d+ bytes: message 1, not compressed, length \d+ \{"body":/m);
      expect(text).toMatch(/^< DATA \d+ bytes: message 2, not compressed, length \d+ \{"body":/m);
      expect(text).toMatch(/^< HEADERS \(trailers\)\n< {3}grpc-status: 0$/m);
    } finally {
      await server.close();
    }
  }, 60_000);
});

describe("check --trace DIR against targets whose every text channel is hostile", () => {
  let grpc: TrackedServer;
  let httpTarget: TrackedServer & { url: string };
  let files: string[] = [];
  const dir = join(tmp, "hostile");
  beforeAll(async () => {
    grpc = await startHostileGrpcText();
    httpTarget = await startHostileHttpText();
    const run = await runCliProcess(
      [
        "check",
        "--grpc",
        grpc.address,
        "--http",
        httpTarget.url,
        "--timeout",
        "2s",
        "--seed",
        "1",
        "--runs",
        "5",
        "--only",
        "grpc.unary.*,grpc.defaults.*,grpc.metadata.accepted,http.create.*,http.read.*,http.negotiation.accept,http.maturity",
        "--trace",
        dir,
      ],
      { GITHUB_ACTIONS: "true" },
    );
    expect(run.code).toBe(1);
    files = readdirSync(dir).map((f) => join(dir, f));
  }, 90_000);
  afterAll(async () => {
    await grpc?.close();
    await httpTarget?.close();
  });

  it("writes traces of both kinds, and the target's words reached them, escaped", () => {
    expect(files.some((f) => f.endsWith(".har"))).toBe(true);
    expect(files.some((f) => f.endsWith(".grpc.txt"))).toBe(true);
    const all = files.map((f) => readFileSync(f, "utf8")).join("\n");
    expect(all).toContain("\\\\x1b[2K");
    expect(all).toContain("\\u202e");
    // Calls made through grpc-js are there too, each with the grpcurl line that repeats it where one can.
    expect(all).toMatch(/^ {3}\(through grpc-js: /m);
    expect(all).toMatch(/^ {3}repeat: grpcurl -plaintext .* example\.exampleService\/Hello$/m);
  });

  it(
    "no file holds a raw control byte, a bidi override, markup a browser would run, or a line a CI runner would " +
      "obey",
    () => {
      for (const f of files) {
        const text = readFileSync(f, "utf8");
        for (const b of RAW_BYTES_FORBIDDEN) expect(text.includes(b), `${f} holds ${JSON.stringify(b)}`).toBe(false);
        // eslint-disable-next-line no-control-regex
        expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u2066\ufffe\uffff]/);
        expect(text).not.toMatch(/^\s*::/m);
        // A HAR is JSON a browser may be handed: no "<" at all. The frame trace is plain text, where markup is only text.
        if (f.endsWith(".har")) {
          expect(text).not.toContain("<");
          expect(() => JSON.parse(text)).not.toThrow();
        }
      }
    },
  );

  it("cuts a body past the bound (a 1 MiB reply) and says so", () => {
    const hars = files.filter((f) => f.endsWith(".har")).map((f) => JSON.parse(readFileSync(f, "utf8")) as Har);
    const cut = hars.flatMap((h) => h.log.entries).find((e) => e.response.content.size >= 1 << 20);
    expect(cut?.response.content.comment).toMatch(/^cut: the first 65536 of \d+ bytes kept/);
    expect(Buffer.byteLength(cut?.response.content.text ?? "")).toBeLessThan(70_000 * 4);
  });
});

describe("the bounds of a trace, and Connect and gRPC-Web bodies", () => {
  it(
    "keeps the last exchanges of a check and the bytes of a body within bound, and the run within its bound, " +
      "saying so",
    async () => {
      const dir = join(tmp, "bounds");
      const writer = createTraceWriter({ dir, limits: { maxBodyBytes: 100, maxExchanges: 3, maxRunBytes: 6000 } });
      const record = (sink: TraceSink, i: number) =>
        sink(() => ({
          protocol: "http",
          startedAt: Date.now(),
          durationMs: 1,
          request: { method: "GET", url: `http://127.0.0.1:1/messages/${i}`, headers: {} },
          response: {
            status: 200,
            headers: { "content-type": ["text/plain"] },
            body: Buffer.from(`${i}:`.padEnd(1000, "x")),
          },
        }));
      await writer.around("a.check", async (sink) => {
        for (let i = 0; i < 5; i++) record(sink, i);
      });
      const file = writer.finish("a.check", { status: "fail", message: "failed" }) as string;
      const har = JSON.parse(readFileSync(join(dir, "a.check.har"), "utf8")) as Har;
      expect(file).toBe(join(dir, "a.check.har"));
      expect(har.log.entries.map((e) => e.request.url.split("/").at(-1))).toEqual(["2", "3", "4"]);
      expect(har.log.comment).toContain("cut: 2 earlier exchange(s) left out; the last 3 are kept");
      expect(har.log.entries[0]?.response.content.comment).toBe(
        "cut: the first 100 of 1000 bytes kept (--trace keeps 100 bytes of a body)",
      );
      expect(har.log.entries[0]?.response.content.text?.length).toBeLessThanOrEqual(100 + 40);
      // The run's bound: the next check's file keeps only what fits in what is left of it, and says so.
      await writer.around("b.check", async (sink) => {
        for (let i = 0; i < 3; i++) record(sink, i);
      });
      writer.finish("b.check", { status: "error", message: "erred" });
      const second = JSON.parse(readFileSync(join(dir, "b.check.har"), "utf8")) as Har;
      expect(second.log.comment).toMatch(
        /cut: the run's trace files reached their bound \(6000 bytes\): [0-2] of 3 exchange\(s\) kept/,
      );
      // A passing check writes nothing, however many exchanges it made.
      await writer.around("c.check", async (sink) => record(sink, 9));
      expect(writer.finish("c.check", { status: "pass", message: "ok" })).toBeUndefined();
      expect(readdirSync(dir).sort()).toEqual(["a.check.har", "b.check.har"]);
    },
  );

  it("a gRPC-Web exchange is base64 with its frames decoded beside it; a Connect proto body, its Message", async () => {
    const reply = Buffer.concat([
      frame(0, encodeMessage("hi \u202e")),
      frame(0x80, Buffer.from("grpc-status: 0\r\ngrpc-message: \x1b[2K\r\n")),
    ]);
    const server = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        if (req.headers["content-type"]?.startsWith("application/grpc-web"))
          res.writeHead(200, { "content-type": "application/grpc-web+proto" }).end(reply);
        else res.writeHead(200, { "content-type": "application/proto" }).end(encodeMessage("hello"));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const baseUrl = new URL(`http://127.0.0.1:${(server.address() as { port: number }).port}`);
    const dir = join(tmp, "rpc");
    const writer = createTraceWriter({ dir });
    try {
      for (const protocol of ["grpc-web", "connect"] as const) {
        const client = createGrpcTarget({ address: baseUrl.href, protocol, timeoutMs: 2000 });
        await writer.around(protocol, (trace) => client.unary(encodeMessage("ask"), { trace }));
        await client.close();
        writer.finish(protocol, { status: "fail", message: "x" });
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    const web = (JSON.parse(readFileSync(join(dir, "grpc-web.har"), "utf8")) as Har).log.entries[0];
    expect(web?.request.postData?.encoding).toBe("base64");
    expect(web?.request.postData?._decoded).toEqual({
      frames: [{ kind: "message", flags: 0, length: 5, decoded: { message: { body: "ask" } } }],
      leftover: 0,
      cut: false,
    });
    expect(web?.response.content.encoding).toBe("base64");
    expect(Buffer.from(web?.response.content.text ?? "", "base64").equals(reply)).toBe(true);
    expect(web?.response.content._decoded).toEqual({
      frames: [
        { kind: "message", flags: 0, length: 8, decoded: { message: { body: "hi \\u202e" } } },
        {
          kind: "trailers",
          flags: 0x80,
          length: 36,
          trailers: [
            { name: "grpc-status", value: "0" },
            { name: "grpc-message", value: "\\x1b[2K" },
          ],
        },
      ],
      leftover: 0,
      cut: false,
    });
    const connect = (JSON.parse(readFileSync(join(dir, "connect.har"), "utf8")) as Har).log.entries[0];
    expect(connect?.request.headers).toContainEqual({ name: "connect-protocol-version", value: "1" });
    expect(connect?.response.content._decoded).toEqual({ message: { body: "hello" } });
  });
});
