// What makes `check`'s output trustworthy beyond the target's text: replays that reproduce, secrets never shown,
// durations with units, selections that judge something, report paths refused before the first call.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeMessage } from "../../../contract/message.js";
import { cli } from "../../helpers/cli.js";
import { listenSlowHello } from "../../helpers/slow-grpc.js";
import { startGrpcJsServer, type TestServer } from "../../helpers/grpc-js-server.js";

const out = mkdtempSync(join(tmpdir(), "trust-"));
const TOKEN = "Bearer s3cr3t-token-value";
let guarded: TestServer;

beforeAll(async () => {
  // Wants its credential on every call, and counts calls: history checks fail, and SHOULD ones only gate with --strict.
  let n = 0;
  guarded = await startGrpcJsServer((_req, call) => {
    if (call.metadata.get("authorization")[0] !== TOKEN) return { code: 16, details: "no credential" };
    return Buffer.from(encodeMessage(`call ${++n}`));
  });
});
afterAll(async () => {
  await guarded.close();
});

/** Splits a replay line into words: bare words, and whole words in single quotes ('\'' for a quote inside). */
function shellWords(line: string): string[] {
  return (line.match(/'(?:[^']|'\\'')*'|\S+/g) ?? []).map((w) =>
    w.startsWith("'") ? w.slice(1, -1).replace(/'\\''/g, "'") : w,
  );
}

describe("replay lines", () => {
  it("are the user's invocation with --only/--seed replaced and secrets as placeholders, and reproduce the verdict", async () => {
    const args = [
      "check",
      "--grpc",
      guarded.address,
      "--only",
      "grpc.stateless.*",
      "--skip",
      "grpc.stateless.replicas",
      "--timeout",
      "3s",
      "--runs",
      "7",
      "--strict",
      "--metadata",
      `authorization=${TOKEN}`,
      "--seed",
      "11",
      "--report-json",
      join(out, "replay.json"),
    ];
    const first = await cli(args);
    expect(first.code).toBe(1);
    expect(first.stdout).toMatch(/^FAIL grpc\.stateless\.deterministic /m);
    const replay = /^ {5}replay: (.*grpc\.stateless\.deterministic.*)$/m.exec(first.stdout)?.[1];
    expect(replay).toBe(
      `npx example-conformance check --grpc ${guarded.address} --skip grpc.stateless.replicas --timeout 3s ` +
        `--runs 7 --strict --metadata 'authorization=<METADATA_VALUE>' --only grpc.stateless.deterministic --seed ` +
        `11`,
    );
    // The secret reaches neither the console nor the report, in whole or as part of a longer value.
    expect(first.stdout).not.toContain("s3cr3t");
    expect(readFileSync(join(out, "replay.json"), "utf8")).not.toContain("s3cr3t");
    // The user fills the placeholder and runs it: the same check fails the same way, and gates (--strict kept).
    const words = shellWords(replay as string)
      .slice(2)
      .map((w) => w.replace("<METADATA_VALUE>", TOKEN));
    const again = await cli(words);
    expect(again.code).toBe(1);
    expect(again.stdout).toMatch(/^FAIL grpc\.stateless\.deterministic /m);
    expect(again.stdout).toMatch(/^not conformant: 1 gating check\(s\) failed \(seed 11\)$/m);
  });
});

describe("a replay of a failure that only --timeout makes", () => {
  it("keeps --timeout, so it fails the same way, where the default bound would pass", async () => {
    // Every call is answered after 400 ms: a failure under --timeout 150ms (made twice, as every silence is), none
    // under the default 5s.
    const slow = await listenSlowHello(() => 400);
    try {
      const first = await cli([
        "check",
        "--grpc",
        slow.address,
        "--only",
        "grpc.defaults.decodes",
        "--timeout",
        "150ms",
        "--runs",
        "4",
        "--seed",
        "5",
      ]);
      expect(first.code).toBe(1);
      expect(first.stdout).toMatch(/^FAIL grpc\.defaults\.decodes .*DEADLINE_EXCEEDED/m);
      const replay = /^ {5}replay: (.*)$/m.exec(first.stdout)?.[1] as string;
      expect(replay).toBe(
        `npx example-conformance check --grpc ${slow.address} --timeout 150ms --runs 4 --only ` +
          `grpc.defaults.decodes --seed 5`,
      );
      const again = await cli(shellWords(replay).slice(2));
      expect(again.code).toBe(1);
      expect(again.stdout).toMatch(/^FAIL grpc\.defaults\.decodes .*DEADLINE_EXCEEDED/m);
      // Without the flag the same check passes: the replay reproduces only because it kept it.
      const withoutTimeout = await cli([
        "check",
        "--grpc",
        slow.address,
        "--only",
        "grpc.defaults.decodes",
        "--runs",
        "4",
        "--seed",
        "5",
        "--verbose",
      ]);
      expect(withoutTimeout.stdout).toMatch(/^PASS grpc\.defaults\.decodes/m);
    } finally {
      await slow.close();
    }
  });
});

describe("secrets", () => {
  async function startApiKeyIgnored() {
    const { brokenHttpServers } = await import("../../../fixtures/broken-servers/http/index.js");
    return (brokenHttpServers.find((s) => s.name === "api-key-ignored") as (typeof brokenHttpServers)[number]).start();
  }

  it(
    "the wrong key a probe sends is made from nothing of the key, which comes from EXAMPLE_API_KEY and reaches no " +
      "output",
    async () => {
      const server = await startApiKeyIgnored();
      try {
        const json = join(out, "key.json");
        const run = await cli(
          ["check", "--http", server.url, "--only", "http.auth.api-key", "--seed", "1", "--report-json", json],
          { EXAMPLE_API_KEY: "conformance-key" },
        );
        expect(run.code).toBe(1);
        expect(run.stdout).toMatch(/^FAIL http\.auth\.api-key /m);
        expect(run.stdout).toContain("x-api-key: conformance-wrong-key");
        for (const text of [run.stdout, run.stderr, readFileSync(json, "utf8")])
          expect(text).not.toContain("conformance-key");
      } finally {
        await server.close();
      }
    },
  );

  it("--api-key on the command line is a placeholder in the replay line", async () => {
    const server = await startApiKeyIgnored();
    try {
      const run = await cli([
        "check",
        "--http",
        server.url,
        "--api-key",
        "conformance-key",
        "--only",
        "http.auth.api-key",
        "--seed",
        "1",
      ]);
      expect(run.stdout).toContain(
        `replay: npx example-conformance check --http ${server.url} --api-key '<API_KEY>' --only ` +
          `http.auth.api-key --seed 1`,
      );
      expect(run.stdout).not.toContain("conformance-key");
    } finally {
      await server.close();
    }
  });

  it("URL credentials are refused without being echoed", async () => {
    const run = await cli(["check", "--http", "http://admin:pa55word@127.0.0.1:2/api"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      "example-conformance: --http http://<CREDENTIALS>@127.0.0.1:2/api: credentials in the URL are not " +
        "supported (give the key with --api-key or EXAMPLE_API_KEY)\n",
    );
  });

  it("--metadata-from-env and --metadata-file read the credential, and an error never repeats a value", async () => {
    const fromEnv = await cli(
      [
        "check",
        "--grpc",
        guarded.address,
        "--only",
        "grpc.defaults.decodes",
        "--metadata-from-env",
        "EXAMPLE_METADATA",
        "--verbose",
      ],
      { EXAMPLE_METADATA: `authorization=${TOKEN}` },
    );
    expect(fromEnv.code).toBe(0);
    expect(fromEnv.stdout).toMatch(/^PASS grpc\.defaults\.decodes/m);
    const file = join(out, "metadata.txt");
    (await import("node:fs")).writeFileSync(file, `# credentials\nauthorization=${TOKEN}\n`);
    const fromFile = await cli([
      "check",
      "--grpc",
      guarded.address,
      "--only",
      "grpc.defaults.decodes",
      "--metadata-file",
      file,
    ]);
    expect(fromFile.code).toBe(0);
    const unset = await cli(["check", "--grpc", guarded.address, "--metadata-from-env", "NOPE"]);
    expect(unset).toMatchObject({
      code: 2,
      stderr: "example-conformance: --metadata-from-env NOPE: the environment variable is not set\n",
    });
    const badKey = await cli(["check", "--grpc", guarded.address, "--metadata", "grpc-x=s3cr3t"]);
    expect(badKey.code).toBe(2);
    expect(badKey.stderr).not.toContain("s3cr3t");
    const badLine = await cli(["check", "--grpc", guarded.address, "--metadata-from-env", "M"], { M: "grpc-x=s3cr3t" });
    expect(badLine.code).toBe(2);
    expect(badLine.stderr).toMatch(
      /^example-conformance: --metadata-from-env M: line 1: "grpc-x" is not a custom metadata key\n$/,
    );
  });
});

describe("usage errors before any call", () => {
  it.each([
    [["--timeout", "5"], /--timeout 5: give a unit, ms, s or m \(such as 5s or 5ms\)/],
    [["--timeout", "1.5"], /--timeout 1\.5: give a unit/],
    [["--skip", "*"], /the selection leaves no check to run, so nothing would be judged/],
    [["--only", "http.*"], /need an interface that was not given \(gRPC target given\)/],
  ] as [string[], RegExp][])("%j exits 2 with one line", async (args, message) => {
    const run = await cli(["check", "--grpc", guarded.address, ...args]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toMatch(message);
  });

  it("load's durations take units too", async () => {
    const run = await cli(["load", "--grpc", guarded.address, "--duration", "10"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--duration 10: give a unit, ms, s or m/);
  });

  it("a report path that cannot be written is exit 2 naming the flag and the cause, before the target is touched", async () => {
    const blocker = join(out, "a-file");
    (await import("node:fs")).writeFileSync(blocker, "");
    const cases: [string, string, RegExp][] = [
      ["--report-json", join(blocker, "r.json"), /a part of the path is not a directory \(ENOTDIR\)|ENOTDIR|EEXIST/],
      ["--report-html", out, /it is a directory \(EISDIR\)/],
    ];
    const fifo = join(out, "pipe");
    try {
      execFileSync("mkfifo", [fifo]);
      cases.push(["--report-junit", fifo, /a pipe or device with nothing reading it \(ENXIO\)/]);
    } catch {
      // No mkfifo on this machine: the other paths still prove the rule.
    }
    for (const [flag, path, cause] of cases) {
      // 127.0.0.1:1 refuses connections: had the run started, this would be exit 3.
      const run = await cli(["check", "--grpc", "127.0.0.1:1", flag, path]);
      expect(run.code, `${flag} ${path}`).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr).toMatch(
        new RegExp(`^example-conformance: ${flag} ${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: cannot write: `),
      );
      expect(run.stderr).toMatch(cause);
    }
  });

  it("load's --json path is refused the same way, before the target is touched", async () => {
    const run = await cli(["load", "--grpc", "127.0.0.1:1", "--duration", "1s", "--json", out]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^example-conformance: --json .*: cannot write: it is a directory \(EISDIR\)\n$/);
  });

  it("a report directory that does not exist yet is made", async () => {
    const nested = join(out, "deep", "er");
    mkdirSync(join(out, "deep"), { recursive: true });
    const run = await cli([
      "check",
      "--grpc",
      guarded.address,
      "--only",
      "contract.shape",
      "--report-json",
      join(nested, "r.json"),
    ]);
    expect(run.code).toBe(0);
    expect(JSON.parse(readFileSync(join(nested, "r.json"), "utf8"))).toMatchObject({ verdict: "partial" });
  });
});
