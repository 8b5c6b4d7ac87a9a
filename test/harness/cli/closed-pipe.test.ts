// Output to a pipe whose reader has gone (`check --list | head -1`) ends quietly: what was read is what was written,
// nothing reaches stderr, no stack trace, and the exit code is the command's own, never 70 for a closed pipe.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../../contract/paths.js";
import { brokenHttpServers } from "../../../fixtures/broken-servers/http/index.js";
import type { StartedHttpServer } from "../../../fixtures/broken-servers/http/types.js";
import { quietWhenClosed } from "../../../harness/cli/io.js";
import { startGrpcServer, type GrpcServerHandle } from "../../../reference-server/grpc.js";
import { withoutProgress } from "../../helpers/cli.js";

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "closed-pipe-"));
const BIN = join(PACKAGE_ROOT, "bin", "example-conformance.js");
let grpc: GrpcServerHandle;
let http: StartedHttpServer;

beforeAll(async () => {
  grpc = await startGrpcServer({ port: 0, log: "silent" });
  http = await (brokenHttpServers.find((s) => s.name === "create-200") as (typeof brokenHttpServers)[number]).start();
});
afterAll(async () => {
  await grpc.close();
  await http.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `example-conformance ARGS | READER` in bash: what the reader printed, the CLI's exit code, and the CLI's stderr. */
async function piped(args: string[], reader: string): Promise<{ out: string; code: number; stderr: string }> {
  const err = join(dir, `stderr-${Math.random().toString(36).slice(2)}`);
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(" ");
  const { stdout } = await run("bash", ["-c", `${quoted} 2>'${err}' | ${reader}; echo "exit=\${PIPESTATUS[0]}"`], {
    timeout: 60_000,
  });
  const code = Number(/exit=(\d+)\s*$/.exec(stdout)?.[1]);
  return { out: stdout.replace(/exit=\d+\s*$/, ""), code, stderr: readFileSync(err, "utf8") };
}

const quiet = (r: { code: number; stderr: string }, code: number) => {
  expect(withoutProgress(r.stderr)).toBe("");
  expect([code, 141]).toContain(r.code);
};

describe("output to a closed pipe", () => {
  it("check --list | head -1 prints one line, writes nothing to stderr, and exits 0", async () => {
    const r = await piped(["check", "--list"], "head -1");
    expect(r.out).toMatch(/^ID +SEVERITY +PROFILE\b.*\n$/);
    quiet(r, 0);
  });

  it("every command that writes to stdout ends quietly when its reader left before it wrote: help, lint, load, check", async () => {
    // `true` reads nothing and exits at once: every write the CLI makes meets a closed pipe.
    quiet(await piped(["--help"], "true"), 0);
    quiet(await piped(["lint", join(PACKAGE_ROOT, "fixtures", "contracts", "no-go-package")], "true"), 1);
    quiet(
      await piped(
        ["load", "--grpc", grpc.address, "--duration", "1s", "--concurrency", "4", "--connections", "1", "--quiet"],
        "true",
      ),
      0,
    );
    // A failing run keeps its verdict's exit code, and still writes the report file it was asked for.
    const json = join(dir, "report.json");
    quiet(await piped(["check", "--http", http.url, "--seed", "1", "--report-json", json], "true"), 1);
    expect(JSON.parse(readFileSync(json, "utf8"))).toMatchObject({ verdict: "not conformant" });
  });

  it("drops what is written after the reader left, and leaves any other write error to the process's handler", () => {
    const stream = new PassThrough();
    const written: string[] = [];
    stream.on("data", (c: Buffer) => written.push(c.toString()));
    const write = quietWhenClosed(stream);
    write("one\n");
    stream.emit("error", Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
    write("two\n");
    expect(written).toEqual(["one\n"]);
    expect(() => stream.emit("error", Object.assign(new Error("no space"), { code: "ENOSPC" }))).toThrow("no space");
  });
});
