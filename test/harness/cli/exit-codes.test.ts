// The exit codes that separate the server from the run (docs/exit-codes.md), through the real CLI process: a
// target that does not speak the protocol asked (3), a broken install (70), a report that cannot be written (2),
// each one line on stderr and no stack trace. Credentials (5) are in test/suites/http/key-placement.test.ts and
// test/suites/grpc/credentials.test.ts; a gating failure (1) and a conformant run (0) throughout test/cli.
import { execFileSync } from "node:child_process";
import {
  closeSync,
  constants,
  cpSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeSync,
} from "node:fs";
import * as http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../../contract/paths.js";
import { listen } from "../../../fixtures/broken-servers/http/_base/server.js";
import { REPORT_WRITE_TIMEOUT_MS } from "../../../harness/reporters/_internals/report-file.js";
import { runCliProcess } from "../../helpers/cli-process.js";

const scratch = mkdtempSync(join(tmpdir(), "exit-codes-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const oneLine = (stderr: string) => {
  expect(stderr.split("\n").filter((l) => l !== "")).toHaveLength(1);
  expect(stderr).not.toMatch(/^\s+at |node:internal|Error:/m);
};

describe("exit 3: the target does not speak the protocol asked", () => {
  it("--grpc at an HTTP/1.1 port: one line naming what it speaks, before any check runs", async () => {
    const server = await listen(http.createServer((_req, res) => res.end("hello")));
    try {
      const address = server.url.replace("http://", "");
      const run = await runCliProcess(["check", "--grpc", address, "--timeout", "2s"]);
      expect(run.code).toBe(3);
      oneLine(run.stderr);
      expect(run.stderr).toMatch(
        new RegExp(
          `^example-conformance: --grpc ${address.replace(/\./g, "\\.")} does not speak HTTP/2: .*it answered in ` +
            `HTTP/1\\.x \\("HTTP/1\\.1 400 Bad Request"\\)\\n$`,
        ),
      );
      // No check ran: no verdict, no FAIL block.
      expect(run.stdout).not.toMatch(/FAIL|conformant/);
    } finally {
      await server.close();
    }
  });
});

describe("exit 70: the harness itself failed", () => {
  /**
   * A copy of the install with one production dependency gone, as a failed or partial `npm ci` leaves it: the
   * compiled harness and the bin copied (Node resolves a symlinked module from where it really is), every other
   * package linked from the real node_modules.
   */
  function installWithout(dependency: string): string {
    const root = join(scratch, `without-${dependency}`);
    mkdirSync(join(root, "node_modules"), { recursive: true });
    cpSync(join(PACKAGE_ROOT, "bin"), join(root, "bin"), { recursive: true });
    cpSync(join(PACKAGE_ROOT, "dist"), join(root, "dist"), { recursive: true });
    cpSync(join(PACKAGE_ROOT, "package.json"), join(root, "package.json"));
    cpSync(join(PACKAGE_ROOT, "proto"), join(root, "proto"), { recursive: true });
    cpSync(join(PACKAGE_ROOT, "fixtures", "golden"), join(root, "fixtures", "golden"), { recursive: true });
    const modules = realpathSync(join(PACKAGE_ROOT, "node_modules"));
    for (const name of readdirSync(modules)) {
      if (name !== dependency && name !== ".bin") symlinkSync(join(modules, name), join(root, "node_modules", name));
    }
    return root;
  }

  it("a dependency missing from the install: one line saying so, exit 70, not Node's trace and exit 1", () => {
    const root = installWithout("commander");
    let code = 0;
    let stderr = "";
    try {
      execFileSync(process.execPath, [join(root, "bin", "example-conformance.js"), "check", "--list"], {
        stdio: ["ignore", "pipe", "pipe"],
        env: { PATH: process.env.PATH ?? "" },
      });
    } catch (err) {
      const e = err as { status: number; stderr: Buffer };
      code = e.status;
      stderr = e.stderr.toString("utf8");
    }
    expect(code).toBe(70);
    oneLine(stderr);
    expect(stderr).toMatch(
      /^example-conformance: internal error: cannot load the harness: Cannot find package 'commander' .* \(the installation is incomplete: reinstall with npm ci\)\n$/,
    );
  });

  it("a dependency loaded only when needed (yaml, for an OpenAPI document in YAML) missing: exit 70, not the " +
    "document's fault", async () => {
    const root = installWithout("yaml");
    const server = await listen(
      http.createServer((req, res) => {
        req.resume();
        if (req.url === "/openapi.yaml")
          res.writeHead(200, { "content-type": "application/yaml" }).end("openapi: 3.0.3\npaths:\n  /messages: {}\n");
        else res.writeHead(200, { "content-type": "application/json" }).end("[]");
      }),
    );
    try {
      const run = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
        const child = spawn(
          process.execPath,
          [
            join(root, "bin", "example-conformance.js"),
            "check",
            "--http",
            server.url,
            "--openapi",
            "/openapi.yaml",
            "--timeout",
            "2s",
            "--quiet",
          ],
          {
            stdio: ["ignore", "ignore", "pipe"],
            env: { PATH: process.env.PATH ?? "" },
          },
        );
        let stderr = "";
        child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
        child.on("error", reject);
        child.on("close", (code) => resolve({ code, stderr }));
      });
      expect(run.code).toBe(70);
      oneLine(run.stderr);
      expect(run.stderr).toMatch(
        /^example-conformance: internal error: cannot read YAML: Cannot find package 'yaml' .*reinstall with npm ci\)\n$/,
      );
    } finally {
      await server.close();
    }
  }, 60_000);
});

describe("exit 2: a report that cannot be written", () => {
  it(
    "a report path under /proc whose writes never drain ends the process within the write bound, exit 2, one line",
    async () => {
      // /proc/self/fd/3 of the check is a named pipe that is full and that nobody reads: every write waits.
      const fifo = join(scratch, "full.fifo");
      execFileSync("mkfifo", [fifo]);
      const fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
      try {
        const chunk = Buffer.alloc(64 * 1024, 0x78);
        for (;;) {
          try {
            writeSync(fd, chunk);
          } catch {
            break;
          }
        }
        const started = performance.now();
        const run = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
          const child = spawn(
            process.execPath,
            [
              join(PACKAGE_ROOT, "bin", "example-conformance.js"),
              "check",
              "--only",
              "grpc.defaults.*",
              "--runs",
              "5",
              "--report-json",
              "/proc/self/fd/3",
            ],
            {
              stdio: ["ignore", "ignore", "pipe", fd],
              env: { PATH: process.env.PATH ?? "" },
            },
          );
          let stderr = "";
          child.stderr?.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
          const backstop = setTimeout(() => child.kill("SIGKILL"), REPORT_WRITE_TIMEOUT_MS + 60_000);
          child.on("error", reject);
          child.on("close", (code) => (clearTimeout(backstop), resolve({ code, stderr })));
        });
        const seconds = (performance.now() - started) / 1000;
        expect(run.code).toBe(2);
        oneLine(run.stderr);
        expect(run.stderr).toMatch(
          /^example-conformance: --report-json \/proc\/self\/fd\/3: cannot write: no answer within 30 s\n$/,
        );
        // The write bound, and a run of a few checks, with margin for a loaded machine: not a claim of speed.
        expect(seconds).toBeLessThan(REPORT_WRITE_TIMEOUT_MS / 1000 + 40);
      } finally {
        closeSync(fd);
      }
    },
    REPORT_WRITE_TIMEOUT_MS + 90_000,
  );

  it("a report path under /proc that refuses the write: exit 2 at once, one line naming the flag and the cause", async () => {
    const run = await runCliProcess([
      "check",
      "--only",
      "grpc.defaults.*",
      "--runs",
      "5",
      "--report-json",
      "/proc/self/environ",
    ]);
    expect(run.code).toBe(2);
    oneLine(run.stderr);
    expect(run.stderr).toMatch(/^example-conformance: --report-json \/proc\/self\/environ: cannot write: /);
  });
});
