// `example-conformance serve` as a script uses it: two address lines first, serving until SIGTERM, exit 0.
import { spawn } from "node:child_process";
import http2 from "node:http2";
import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it, onTestFinished } from "vitest";
import { PACKAGE_ROOT } from "../../../common/paths.js";
import { encodeMessage } from "../../../common/message.js";
import { createGrpcTarget } from "../../../harness/targets/create-grpc-target.js";
import { encodeFrames } from "../../../harness/protocols/grpc/index.js";
import { cli } from "../../helpers/cli.js";
import { defaultDataDir } from "../../../harness/cli/serve-command.js";

const BIN = join(PACKAGE_ROOT, "bin", "example-conformance.js");

describe("example-conformance serve", () => {
  it("prints `grpc HOST:PORT` and `http URL` first, serves both, and exits 0 on SIGTERM", async () => {
    const child = spawn(
      process.execPath,
      [BIN, "serve", "--grpc-port", "0", "--http-port", "0", "--log-level", "silent", "--store", "memory:"],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
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
    const child = spawn(
      process.execPath,
      [BIN, "serve", "--grpc-port", "0", "--http-port", "0", "--log-level", "silent", "--store", "memory:"],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    const lines = createInterface({ input: child.stdout });
    let grpcLine = "";
    for await (const line of lines) {
      grpcLine = line;
      break;
    }
    const session = http2.connect(`http://${grpcLine.slice(5)}`);
    const stream = session.request({
      ":method": "POST",
      ":path": "/example.exampleService/Hello",
      "content-type": "application/grpc",
      te: "trailers",
    });
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

  it("keeps data in the user's data folder (XDG_DATA_HOME) by default, never in the folder it runs from, and says " +
    "where", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "serve-cwd-"));
    const xdg = mkdtempSync(join(tmpdir(), "serve-xdg-"));
    const child = spawn(
      process.execPath,
      [BIN, "serve", "--grpc-port", "0", "--http-port", "0", "--log-level", "silent"],
      {
        cwd,
        env: { ...process.env, XDG_DATA_HOME: xdg },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    // A test that runs out of time is abandoned, not unwound: its finally never runs, so the child is ended here.
    onTestFinished(() => void child.kill("SIGKILL"));
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    const lines = createInterface({ input: child.stdout });
    try {
      for await (const line of lines) if (line.startsWith("http ")) break;
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
    // Said even at --log-level silent: the user did not choose the folder.
    expect(stderr).toContain(`example-conformance: messages are kept in pglite:${join(xdg, "example-conformance")}\n`);
    expect(existsSync(join(xdg, "example-conformance", "pgdata", "PG_VERSION"))).toBe(true);
    expect(readdirSync(cwd)).toEqual([]);
    // A backstop: a first start makes a PostgreSQL cluster, which took past 60 s at load 18 on 2 cores.
  }, 180_000);

  it("takes ~/.local/share without XDG_DATA_HOME (or with a relative one), %LOCALAPPDATA% on Windows", () => {
    expect(defaultDataDir({}, "/home/u", "linux")).toBe("/home/u/.local/share/example-conformance");
    expect(defaultDataDir({ XDG_DATA_HOME: "rel/data" }, "/home/u", "linux")).toBe(
      "/home/u/.local/share/example-conformance",
    );
    expect(defaultDataDir({ XDG_DATA_HOME: "/x/data" }, "/home/u", "darwin")).toBe("/x/data/example-conformance");
    expect(defaultDataDir({ LOCALAPPDATA: "C:\\Users\\u\\AppData\\Local" }, "C:\\Users\\u", "win32")).toMatch(
      /AppData.Local.example-conformance$/,
    );
  });
});
