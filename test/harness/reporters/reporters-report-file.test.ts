// A report written to a pipe: whole however slowly its reader drains it, and refused within the bound when the
// reader takes nothing, naming the flag (a pipe takes 64 KiB per write at most, and none while it is full).
import { execFileSync, spawn } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { openReportFile } from "../../../harness/reporters/_internals/report-file.js";

const dir = mkdtempSync(join(tmpdir(), "report-file-"));
const REPORT = "0123456789abcdef".repeat(1 << 16); // 1 MiB

function fifo(name: string): string {
  const path = join(dir, name);
  execFileSync("mkfifo", [path]);
  return path;
}

describe("a report file that is a pipe", () => {
  it("gets the whole report, written as its reader drains it", async () => {
    const path = fifo("drained");
    // A reader held open (it reads nothing) so the report opens; then cat, which reads it all.
    const held = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const file = await openReportFile("--report-json", path, 20_000);
      const cat = spawn("cat", [path], { stdio: ["ignore", "pipe", "inherit"] });
      // vitest abandons a test that times out without unwinding it: the reader is ended however the test ends.
      onTestFinished(() => {
        cat.kill("SIGKILL");
      });
      const received: Buffer[] = [];
      cat.stdout.on("data", (c: Buffer) => received.push(c));
      const ended = new Promise((resolve) => cat.on("close", resolve));
      await file.write(REPORT);
      await file.close();
      await ended;
      expect(Buffer.concat(received).toString("utf8")).toBe(REPORT);
    } finally {
      closeSync(held);
    }
  });

  it("whose reader takes nothing is a usage error naming the flag once the bound has passed", async () => {
    const path = fifo("stalled");
    const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const file = await openReportFile("--report-junit", path, 300);
      await expect(file.write(REPORT)).rejects.toMatchObject({
        code: "usage",
        message: `--report-junit ${path}: cannot write: no answer within 0.3 s`,
      });
      await file.close();
    } finally {
      closeSync(reader);
    }
  });
});
