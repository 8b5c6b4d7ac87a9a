// check-client end to end, as CI runs the CLI: each correct client on another stack is conformant, each broken one
// fails exactly its check with a message naming the request, a hung client is stopped at its bound, and a client that
// cannot be started is the user's error (exit 2).
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { brokenClients, correctClients, type ClientFixture } from "../../../fixtures/clients/index.js";
import type { RunReport } from "../../../harness/report.js";
import { runCliProcess } from "../../helpers/cli-process.js";
import { skipIfMissing } from "../../helpers/toolchain.js";

const KEY = "client-secret-0123";

async function judge(
  client: ClientFixture,
  extra: string[] = [],
): Promise<{ code: number | null; report: RunReport; stdout: string; stderr: string }> {
  const command = await client.command();
  const run = await runCliProcess(["check-client", "--api-key", KEY, "--reporter", "json", ...extra, "--", ...command]);
  return { code: run.code, report: JSON.parse(run.stdout) as RunReport, stdout: run.stdout, stderr: run.stderr };
}

describe("check-client: correct clients on other stacks", () => {
  for (const client of correctClients) {
    it(`${client.name} is conformant`, { timeout: 240_000 }, async (ctx) => {
      await skipIfMissing(client, (why) => ctx.skip(why));
      const { code, report, stdout } = await judge(client);
      expect(
        report.checks.filter((c) => c.status === "fail" || c.status === "error").map((c) => `${c.id}: ${c.message}`),
      ).toEqual([]);
      expect(report.verdict).toBe("conformant");
      expect(code).toBe(0);
      expect(report.target.client).toContain(client.name === "curl-connect" ? "client.sh" : "");
      expect(stdout).not.toContain(KEY);
    });
  }
});

describe("check-client: broken clients on other stacks", () => {
  for (const client of brokenClients) {
    it(`${client.name} fails exactly ${client.fails}`, { timeout: 240_000 }, async (ctx) => {
      await skipIfMissing(client, (why) => ctx.skip(why));
      const { report, stdout } = await judge(client);
      const failed = report.checks.filter((c) => c.status === "fail" || c.status === "error");
      expect(failed.map((c) => c.id)).toEqual([client.fails]);
      const [only] = failed;
      expect(only?.message).toMatch(
        /request #\d+ \((gRPC|Connect|gRPC-Web|HTTP) POST \/example\.exampleService\/Hello/,
      );
      expect(only?.replay).toMatch(
        new RegExp(
          `^npx example-conformance check-client --api-key '<API_KEY>' --only ${client.fails} --seed \\d+ -- `,
        ),
      );
      expect(stdout).not.toContain(KEY);
    });
  }
});

describe("check-client: the run itself", () => {
  it("stops a hung client at its bound, with what it started, and reports it as the client's defect", {
    timeout: 60_000,
  }, async () => {
    const pidFile = join(mkdtempSync(join(tmpdir(), "check-client-")), "child.pid");
    const run = await runCliProcess([
      "check-client",
      "--timeout",
      "1s",
      "--only",
      "client.hello.succeeds",
      "--",
      "sh",
      "-c",
      `sleep 40 & echo $! > ${pidFile}; wait`,
    ]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /FAIL client\.hello\.succeeds .*did not exit within 1000 ms: its process group was killed at the bound \(hung\)/,
    );
    // The child the client started went with it: no process at its pid, or one killed and not yet reaped (a zombie).
    // Once reaped, its pid may be another process's (a kernel worker, state I, was seen there on a busy machine): a
    // process at the pid is the child only while its name is sleep's.
    const child = Number(readFileSync(pidFile, "utf8"));
    const stat = existsSync(`/proc/${child}/stat`) ? readFileSync(`/proc/${child}/stat`, "utf8") : "";
    const state = /^\d+ \(sleep\) /.test(stat) ? stat.replace(/^.*\) /s, "")[0] : "gone";
    expect(["gone", "Z", "X"]).toContain(state);
  });

  it("a client that cannot be started is a usage error: exit 2, one line", async () => {
    const run = await runCliProcess(["check-client", "--", "./no-such-client-here"]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split("\n")).toEqual([
      "example-conformance: client command ./no-such-client-here: no such executable file (or it is not executable)",
    ]);
  });

  it("without --api-key the key's check goes unjudged and the verdict says partial", { timeout: 60_000 }, async () => {
    const run = await runCliProcess([
      "check-client",
      "--reporter",
      "json",
      "--",
      ...(await correctClients[2]!.command()),
    ]);
    const report = JSON.parse(run.stdout) as RunReport;
    expect(report.unjudged.map((u) => [u.id, u.needs])).toContainEqual(["client.api-key.each-request", "--api-key"]);
    expect(report.verdict).toBe("partial");
  });

  it("--list lists every client check and scenario", async () => {
    const run = await runCliProcess(["check-client", "--list"]);
    expect(run.code).toBe(0);
    for (const id of [
      "client.hello.succeeds",
      "client.requests.valid",
      "client.unknown-fields.binary",
      "client.unknown-fields.json",
      "client.empty-reply",
      "client.retry.unavailable",
      "client.retry.invalid-argument",
      "client.deadline",
      "client.api-key.each-request",
    ]) {
      expect(run.stdout).toContain(id);
    }
  });
});
