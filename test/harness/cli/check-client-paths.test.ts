// check-client through its other paths, as CI runs the CLI: correct clients over gRPC-Web and on the /messages
// resources with the key are conformant; a retry sent without a pause is a SHOULD finding with its measured gap; a
// client that sends the key everywhere leaves it in no report and no output; the configuration file and its
// waivers work as they do for check. The runs are independent, so they run side by side.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  brokenClients,
  correctClients,
  httpPathClients,
  leakyClient,
  type ClientFixture,
} from "../../../fixtures/clients/index.js";
import type { RunReport } from "../../../harness/report.js";
import { runCliProcess } from "../../helpers/cli-process.js";
import { skipIfMissing } from "../../helpers/toolchain.js";

const KEY = "leak+me/0123-secret";
const CURL = correctClients.find((c) => c.name === "curl-connect") as ClientFixture;
const CURL_NO_KEY = brokenClients.find((c) => c.name === "curl, no key") as ClientFixture;
const failing = (report: RunReport) => report.checks.filter((c) => c.status === "fail" || c.status === "error");

async function judge(client: ClientFixture, extra: string[] = [], env: Record<string, string> = {}) {
  const run = await runCliProcess(
    ["check-client", "--reporter", "json", ...extra, "--", ...(await client.command())],
    env,
  );
  return { ...run, report: JSON.parse(run.stdout) as RunReport };
}

describe.concurrent("check-client: the HTTP port's other paths", () => {
  for (const client of httpPathClients) {
    it(`${client.name} is conformant`, { timeout: 120_000 }, async (ctx) => {
      await skipIfMissing(client, (why) => ctx.skip(why));
      const { code, report } = await judge(client, ["--api-key", KEY]);
      expect(failing(report).map((c) => `${c.id}: ${c.message}`)).toEqual([]);
      expect(report.verdict).toBe("conformant");
      expect(code).toBe(0);
      // What the key check judged: one Hello, or a Hello and three resource requests, each carrying the key.
      const keyCheck = report.checks.find((c) => c.id === "client.api-key.each-request");
      expect(keyCheck?.message).toBe(
        `each of ${client.name.includes("/messages") ? 4 : 1} request(s) carried the API key`,
      );
    });
  }

  it("a client that sends the key in a body, headers, metadata, a query and its own output leaves it in no report " +
    "and no output", {
    timeout: 120_000,
  }, async (ctx) => {
    await skipIfMissing(leakyClient, (why) => ctx.skip(why));
    const dir = mkdtempSync(join(tmpdir(), "check-client-leak-"));
    const files = {
      json: join(dir, "r.json"),
      junit: join(dir, "r.xml"),
      html: join(dir, "r.html"),
      summary: join(dir, "summary.md"),
    };
    const run = await runCliProcess(
      [
        "check-client",
        "--verbose",
        "--api-key",
        KEY,
        "--reporter",
        "console",
        "--reporter",
        "github",
        "--reporter",
        `json=${files.json}`,
        "--reporter",
        `junit=${files.junit}`,
        "--reporter",
        `html=${files.html}`,
        "--",
        ...(await leakyClient.command()),
        KEY,
      ],
      { GITHUB_STEP_SUMMARY: files.summary },
    );
    expect(run.code).toBe(1);
    const outputs: Record<string, string> = {
      stdout: run.stdout,
      stderr: run.stderr,
      ...Object.fromEntries(Object.entries(files).map(([k, f]) => [k, readFileSync(f, "utf8")])),
    };
    const forms = [
      KEY,
      encodeURIComponent(KEY),
      Buffer.from(KEY).toString("hex"),
      Buffer.from(KEY).toString("base64").replace(/=+$/, ""),
    ];
    for (const [name, text] of Object.entries(outputs))
      for (const form of forms) expect(`${name}: ${text.includes(form) ? form : "none"}`).toBe(`${name}: none`);
    // The reports do show the requests that carried it, with the key as its placeholder.
    const report = JSON.parse(outputs.json ?? "") as RunReport;
    const details = report.checks.flatMap((c) => [c.message, ...(c.details ?? [])]).join("\n");
    expect(details).toContain("?api_key=<API_KEY>");
    expect(details).toContain("x-key-bin: (base64-decoded) <API_KEY>");
    expect(details).toContain("authorization: Bearer <API_KEY>");
    // A key in a query parameter is the recording server's to read: the resource behind it (which refuses a
    // parameter it does not understand) never sees it, so the GET is answered 200, not 400.
    expect(details).toMatch(/HTTP GET \/messages\?api_key=<API_KEY> at \d+ ms, answered 200\)/);
    expect(details).toMatch(
      /body: \d+ bytes, first bytes [0-9a-f]+ \(the API key's bytes, if any, replaced by <API_KEY>'s\)/,
    );
    expect(details).toContain("client stderr (last bytes): leaking the key <API_KEY> on stderr");
    expect(report.target.client).toMatch(/ <API_KEY>$/);
  });
});

describe.concurrent("check-client: the configuration file", () => {
  it("takes the key from the variable the file names, its selection and its implementation, and says in one line " +
    "what it ignores", {
    timeout: 60_000,
  }, async () => {
    const file = join(mkdtempSync(join(tmpdir(), "check-client-config-")), "example-conformance.yaml");
    writeFileSync(
      file,
      [
        "implementation: { name: shell-client, version: '1.0' }",
        "credentials: { api-key-env: CLIENT_KEY }",
        "targets: { grpc: '127.0.0.1:1' }",
        "profile: protocol",
        "claims: { replicas: single }",
        "skip: [client.deadline]",
        "",
      ].join("\n"),
    );
    const { code, report, stdout, stderr } = await judge(CURL, ["--config", file], { CLIENT_KEY: KEY });
    expect(stderr.split("\n").filter(Boolean)).toEqual([
      `example-conformance: warning: ${file}: check-client ignores targets, profile, claims (they describe a ` +
        `server under check; a client run starts its own servers)`,
    ]);
    expect(report.implementation).toEqual({ name: "shell-client", version: "1.0" });
    expect(report.checks.find((c) => c.id === "client.api-key.each-request")?.status).toBe("pass");
    expect(report.checks.map((c) => c.id)).not.toContain("client.deadline");
    expect(report.claims).toEqual([]);
    expect(report.verdict).toBe("conformant");
    expect(code).toBe(0);
    expect(stdout).not.toContain(KEY);
  });

  it("its expected failures waive a client check's failure: exit 0, conformant with waivers", {
    timeout: 60_000,
  }, async () => {
    const file = join(mkdtempSync(join(tmpdir(), "check-client-waiver-")), "example-conformance.yaml");
    writeFileSync(
      file,
      [
        "expected-failures:",
        "  - check: client.api-key.each-request",
        "    reason: the key is sent from version 2 on",
        "",
      ].join("\n"),
    );
    const { code, report } = await judge(CURL_NO_KEY, ["--config", file, "--api-key", KEY]);
    expect(
      report.checks.filter((c) => c.status !== "pass" && c.status !== "skip").map((c) => [c.id, c.status]),
    ).toEqual([["client.api-key.each-request", "expected-fail"]]);
    expect(report.waivers).toEqual([
      {
        id: "client.api-key.each-request",
        pattern: "client.api-key.each-request",
        reason: "the key is sent from version 2 on",
      },
    ]);
    expect(report.verdict).toBe("conformant with waivers");
    expect(code).toBe(0);
  });
});
