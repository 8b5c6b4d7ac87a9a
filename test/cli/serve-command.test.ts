// `example-conformance serve` as a script uses it: two address lines first, serving until SIGTERM, exit 0.
import { spawn } from "node:child_process";
import http2 from "node:http2";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../contract/paths.js";
import { encodeMessage } from "../../contract/message.js";
import { createGrpcTarget } from "../../harness/targets/create-grpc-target.js";
import { encodeFrames } from "../../harness/protocols/grpc/index.js";
import { cli } from "../helpers/cli.js";

const BIN = join(PACKAGE_ROOT, "bin", "example-conformance.js");

describe("example-conformance serve", () => {
  it("prints `grpc HOST:PORT` and `http URL` first, serves both, and exits 0 on SIGTERM", async () => {
    const child = spawn(process.execPath, [BIN, "serve", "--grpc-port", "0", "--http-port", "0", "--log-level", "silent", "--store", "memory:"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    const lines = createInterface({ input: child.stdout });
    const first: string[] = [];
    for await (const line of lines) {
      first.push(line);
      if (first.length === 2) break;
    }
    try {
      expect(first[0]).toMatch(/^grpc 127\.0\.0\.1:\d+$/);
      expect(first[1]).toMatch(/^http http:\/\/127\.0\.0\.1:\d+$/);
      const target = createGrpcTarget({ address: first[0]!.slice(5), timeoutMs: 3000 });
      expect((await target.unary(encodeMessage("served"))).code).toBe(0);
      await target.close();
      const root = await fetch(`${first[1]!.slice(5)}/`, { headers: { accept: "application/json" } });
      expect(root.status).toBe(200);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
  });

  it("finishes a call in flight at SIGTERM, then exits 0", async () => {
    const child = spawn(process.execPath, [BIN, "serve", "--grpc-port", "0", "--http-port", "0", "--log-level", "silent", "--store", "memory:"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    const lines = createInterface({ input: child.stdout });
    let grpcLine = "";
    for await (const line of lines) {
      grpcLine = line;
      break;
    }
    const session = http2.connect(`http://${grpcLine.slice(5)}`);
    const stream = session.request({ ":method": "POST", ":path": "/example.exampleService/Hello", "content-type": "application/grpc", te: "trailers" });
    stream.resume();
    const status = new Promise<unknown>((resolve) => stream.on("trailers", (t) => resolve(t["grpc-status"])));
    stream.write(Buffer.alloc(0));
    await new Promise((r) => setTimeout(r, 100)); // the call is open
    child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 100));
    stream.end(Buffer.from(encodeFrames([{ compressed: false, data: encodeMessage("in flight") }])));
    expect(await status).toBe("0");
    session.close();
    expect(await exited).toBe(0);
  });

  it("refuses --tls-cert without --tls-key with one line and exit 2", async () => {
    const run = await cli(["serve", "--tls-cert", "c.pem"]);
    expect(run).toMatchObject({ code: 2, stderr: "example-conformance: --tls-cert and --tls-key go together\n" });
  });

  it("refuses a port out of range", async () => {
    const run = await cli(["serve", "--grpc-port", "70000"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--grpc-port must be between 0 and 65535/);
  });
});
