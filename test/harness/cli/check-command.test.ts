// `example-conformance check` as a CI pipeline runs it: exit codes, report files, one-line errors.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { XMLValidator } from "fast-xml-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeMessage, encodeMessage } from "../../../contract/message.js";
import { DEFAULT_ALLOWED_WORDS, DEFAULT_VERBS } from "../../../suites/http/_internals/path-rules.js";
import { cli, withoutProgress } from "../../helpers/cli.js";
import { startGrpcJsServer, type TestServer } from "../../helpers/grpc-js-server.js";

let good: TestServer;
let counting: TestServer;
const out = mkdtempSync(join(tmpdir(), "check-cli-"));

beforeAll(async () => {
  good = await startGrpcJsServer((req) => {
    const d = decodeMessage(req);
    return d.ok ? Buffer.from(encodeMessage(`hi ${d.message.body}`)) : { code: 13, details: d.reason };
  });
  let n = 0;
  counting = await startGrpcJsServer(() => Buffer.from(encodeMessage(`call ${++n}`)));
});
afterAll(async () => {
  await good.close();
  await counting.close();
});

describe("example-conformance check", () => {
  it("exits 0 for a conformant target and writes valid JSON, JUnit and HTML reports", async () => {
    const files = { json: join(out, "r.json"), junit: join(out, "r.xml"), html: join(out, "r.html") };
    const run = await cli([
      "check",
      "--grpc",
      good.address,
      "--skip",
      "contract.*",
      "--runs",
      "10",
      "--seed",
      "4",
      "--report-json",
      files.json,
      "--report-junit",
      files.junit,
      "--report-html",
      files.html,
    ]);
    expect(withoutProgress(run.stderr)).toBe("");
    expect(run.code).toBe(0);
    // --skip contract.* leaves gating checks unjudged: exit 0 as for any filtered run, but never "conformant".
    expect(run.stdout).toMatch(
      /^partial: no gating check failed, but 4 gating check\(s\) were not run \(--skip contract\.\*\), and 1 gating check\(s\) could not be judged without --replica \(grpc\.stateless\.replicas\), and 1 more gating check\(s\) could not judge \(rpc\.cross-protocol\.equivalent: each says why\) \(seed 4\)$/m,
    );
    expect(run.stdout).not.toMatch(/^conformant/m);
    const json = JSON.parse(readFileSync(files.json, "utf8")) as {
      seed: number;
      target: { grpc: string };
      checks: unknown[];
    };
    expect(json).toMatchObject({
      seed: 4,
      target: { grpc: good.address },
      verdict: "partial",
      selection: { skip: ["contract.*"] },
      scope: { interfaces: ["grpc"] },
    });
    expect(json.checks.length).toBeGreaterThan(25);
    expect(XMLValidator.validate(readFileSync(files.junit, "utf8"))).toBe(true);
    expect(readFileSync(files.html, "utf8")).toMatch(/Partial: no gating check failed/);
    expect(readFileSync(files.html, "utf8")).not.toMatch(/Conformant: /);
  });

  it("exits 1 for a target that counts calls, printing the replay command", async () => {
    const run = await cli([
      "check",
      "--grpc",
      counting.address,
      "--only",
      "grpc.stateless.history-independent",
      "--seed",
      "8",
      "--runs",
      "10",
    ]);
    expect(run.code).toBe(1);
    // The user's own invocation, with --only and --seed named anew and nothing else dropped.
    expect(run.stdout).toContain(
      `replay: npx example-conformance check --grpc ${counting.address} --runs 10 --only ` +
        `grpc.stateless.history-independent --seed 8\n`,
    );
  });

  it("exits 3 within the timeout for a target that is not there, naming the address and the cause", async () => {
    const started = performance.now();
    const run = await cli(["check", "--grpc", "127.0.0.1:1", "--timeout", "2s"]);
    expect(run).toMatchObject({ code: 3, stdout: "" });
    expect(run.stderr).toMatch(/^example-conformance: cannot reach 127\.0\.0\.1:1: ECONNREFUSED.*\n$/);
    expect(performance.now() - started).toBeLessThan(10_000); // a backstop against hanging, not a speed claim
  });

  it.each([
    [["--grpc", "nohost"], /--grpc nohost: expected host:port/],
    [["--timeout", "soon"], /--timeout must be a duration/],
    [["--runs", "0"], /--runs must be between 1 and 100000/],
    [["--metadata", "novalue"], /--metadata novalue: expected key=value/],
    [["--metadata", "grpc-timeout=1S"], /not a custom metadata key/],
    [["--ca", "x.pem"], /--ca, --cert and --key need --tls or an https:\/\/ URL/],
    [["--replica", "127.0.0.1:2"], /--replica needs --grpc/, "no target"],
    [["--only", "grpc.nope"], /--only grpc.nope: matches no check/],
    [["--profile", "everything"], /--profile.*everything/],
  ] as [string[], RegExp, string?][])("exits 2 with one line for %j", async (args, message, noTarget) => {
    // A later --grpc overrides the first, so the good target is a default each case can replace.
    const run = await cli(["check", ...(noTarget ? [] : ["--grpc", good.address]), ...args]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toMatch(message);
  });

  it("--help says each default once and truly: no empty lists, and a list with a default names it", async () => {
    for (const command of ["check", "serve", "load"]) {
      const run = await cli([command, "--help"]);
      expect(run.stdout, command).not.toMatch(/default: \[\]/);
      expect(run.stdout.match(/\(default/g)?.length ?? 0, command).toBeLessThanOrEqual(
        run.stdout.match(/^\s+--/gm)?.length ?? 0,
      );
    }
    const help = (await cli(["check", "--help"])).stdout.replace(/\s+/g, " ");
    expect(help).toMatch(/--collection <path> [^-]*default \/messages\)/);
    expect(help).not.toMatch(/default \/messages\) \(default/);
    // The lists with a default name every word of it: --verbs replaces the list, so a user extends it by copying.
    expect(help).toContain(`the HTTP method names (comma-separated; default ${DEFAULT_VERBS.join(", ")})`);
    expect(help).toContain(`(repeatable; ${DEFAULT_ALLOWED_WORDS.join(", ")} always allowed)`);
    expect(help).toMatch(/--timeout <duration> [^-]*\(default: 5s\)/);
  });

  it("--list prints every check with severity, profile and spec, touching no target", async () => {
    const run = await cli(["check", "--list", "--grpc", "127.0.0.1:1"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /^grpc\.stateless\.history-independent\s+MUST\s+contract\s+grpc,connect,grpc-web\s+§1\.2/m,
    );
    expect(run.stdout).toMatch(/^grpc\.trailers\.status\s+\S+\s+\S+\s+grpc\s+/m);
    expect(run.stdout).toMatch(/^grpc\.unary\.cardinality\s+SHOULD\s+protocol/m);
    expect(run.stdout).toMatch(/^grpc\.golden\.empty-message\s+MUST/m);
  });

  it("--reporter name=FILE writes each report beside the console, and a bare document reporter has stdout to itself", async () => {
    const files = { json: join(out, "by-name.json"), junit: join(out, "by-name.xml") };
    const run = await cli([
      "check",
      "--grpc",
      good.address,
      "--only",
      "grpc.defaults.*",
      "--runs",
      "5",
      "--seed",
      "2",
      "--reporter",
      `json=${files.json}`,
      `--reporter=junit=${files.junit}`,
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^partial: .*\(seed 2\)$/m);
    expect(JSON.parse(readFileSync(files.json, "utf8"))).toMatchObject({ seed: 2, verdict: "partial" });
    expect(XMLValidator.validate(readFileSync(files.junit, "utf8"))).toBe(true);
    const json = await cli([
      "check",
      "--grpc",
      good.address,
      "--only",
      "grpc.defaults.*",
      "--runs",
      "5",
      "--seed",
      "2",
      "--reporter",
      "json",
    ]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ seed: 2, verdict: "partial", target: { grpc: good.address } });
  });

  it.each([
    [["--reporter", "jsno=out.json"], /unknown reporter "jsno"; known: console, github, json, junit, html/],
    [["--reporter", "json", "--reporter", "console"], /--reporter json without a file writes its report to stdout/],
    [["--reporter", `json=${join(out, "missing-dir-is-made", "\0")}`], /--reporter json=.*: cannot write/],
  ])("--reporter refuses %j with exit 2 and one line, before any call", async (args, message) => {
    const run = await cli(["check", "--grpc", "127.0.0.1:1", ...args]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toMatch(message);
  });

  it("writes GitHub Actions annotations when GITHUB_ACTIONS=true", async () => {
    const run = await cli(
      ["check", "--grpc", counting.address, "--only", "grpc.stateless.deterministic", "--seed", "1"],
      { GITHUB_ACTIONS: "true" },
    );
    expect(run.stdout).toMatch(
      /^::warning title=grpc\.stateless\.deterministic \[SHOULD §1\.2 \(stateless server\)\]::/m,
    );
  });
});

describe("example-conformance check with no target", () => {
  it("starts the built-in reference server, passes every gRPC and HTTP check, and replays without --grpc", async () => {
    const run = await cli(["check", "--seed", "2", "--runs", "20", "--verbose"]);
    expect(withoutProgress(run.stderr)).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/\(built-in reference server\)/);
    expect(run.stdout).not.toMatch(/^(FAIL|ERR)/m);
    expect(run.stdout).toMatch(/^0 gating failure\(s\), \d+ finding\(s\) that do not gate; \d+ passed, \d+ skipped/m);
    // One instance in this process: the replica checks are not applicable by its claim, so the run is conformant.
    expect(run.stdout).toMatch(/^claims \(declared by the implementation, not judged\): replicas: single$/m);
    expect(run.stdout.trimEnd().split("\n").at(-1)).toMatch(/^conformant: /);
    // The built-in server has a key for this run, so the API-key check runs rather than skips; level 3 is reported.
    expect(run.stdout).toMatch(/^PASS http\.auth\.api-key /m);
    expect(run.stdout).toMatch(/^PASS http\.maturity .* level 3 \(REST API\)/m);
    expect(run.stdout).not.toMatch(/replay: .*--(grpc|http) /);
  });
});

async function startBrokenHttp(name: string) {
  const { brokenHttpServers } = await import("../../../fixtures/broken-servers/http/index.js");
  const broken = brokenHttpServers.find((s) => s.name === name);
  if (!broken) throw new Error(`fixture ${name} is missing`);
  return broken.start();
}

describe("example-conformance check --http", () => {
  it("checks an HTTP target alone: the HTTP checks run, the gRPC ones skip saying why, the report names the URL", async () => {
    const { startReferenceServer } = await import("../../../reference-server/start.js");
    const server = await startReferenceServer({ grpcPort: 0, httpPort: 0, log: "silent", apiKey: "k-123" });
    try {
      const json = join(out, "http.json");
      const run = await cli([
        "check",
        "--http",
        server.httpUrl,
        "--api-key",
        "k-123",
        "--skip",
        "contract.*",
        "--report-json",
        json,
      ]);
      expect(withoutProgress(run.stderr)).toBe("");
      expect(run.code).toBe(0);
      const report = JSON.parse(readFileSync(json, "utf8")) as {
        target: { http?: string; grpc?: string };
        checks: { id: string; status: string; message: string }[];
      };
      expect(report.target).toMatchObject({ http: server.httpUrl });
      expect(report.target.grpc).toBeUndefined();
      const http = report.checks.filter((c) => c.id.startsWith("http."));
      expect(http.length).toBeGreaterThan(20);
      // One instance, no --http-replica: the replica check has nothing to compare.
      expect(http.filter((c) => c.status !== "pass").map((c) => `${c.id}: ${c.status} ${c.message}`)).toEqual([
        "http.stateless.replicas: skip no other instance given (--http-replica URL), so statelessness across " +
          "replicas was not judged",
      ]);
      expect(report.checks.find((c) => c.id === "http.maturity")?.message).toMatch(/^level 3/);
      expect(
        report.checks
          .filter((c) => c.id.startsWith("grpc."))
          .every(
            (c) =>
              c.status === "skip" && c.message === "no RPC target (--grpc HOST:PORT, --connect URL or --grpc-web URL)",
          ),
      ).toBe(true);
      // The key is a secret: it reaches neither the console nor the report.
      expect(run.stdout).not.toContain("k-123");
      expect(readFileSync(json, "utf8")).not.toContain("k-123");
    } finally {
      await server.close();
    }
  });

  it("exits 1 for a broken HTTP server and prints a replay line with --http and a curl line", async () => {
    const server = await startBrokenHttp("create-200");
    try {
      const run = await cli(["check", "--http", server.url, "--only", "http.create.status-201", "--seed", "3"]);
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(/^FAIL http\.create\.status-201/m);
      expect(run.stdout).toContain(
        `replay: npx example-conformance check --http ${server.url} --only http.create.status-201 --seed 3`,
      );
      expect(run.stdout).toMatch(/curl .*-X POST/);
    } finally {
      await server.close();
    }
  });

  it("--verbs and --allow-word change what the verb rule flags, and the replay line carries them", async () => {
    const server = await startBrokenHttp("verb-path");
    try {
      const flagged = await cli(["check", "--http", server.url, "--only", "http.paths.nouns", "--seed", "5"]);
      expect(flagged.code).toBe(1);
      const word = /names an action: "([a-z]+)"/.exec(flagged.stdout)?.[1];
      expect(word).toBeDefined();
      const allowed = await cli([
        "check",
        "--http",
        server.url,
        "--only",
        "http.paths.nouns",
        "--allow-word",
        word as string,
        "--verbose",
      ]);
      expect(allowed.stdout).toMatch(/^PASS http\.paths\.nouns/m);
      const custom = await cli([
        "check",
        "--http",
        server.url,
        "--only",
        "http.paths.nouns",
        "--verbs",
        "messages",
        "--seed",
        "5",
      ]);
      expect(custom.code).toBe(1);
      expect(custom.stdout).toMatch(/names an action: "messages"/);
      expect(custom.stdout).toContain(`--verbs messages`);
    } finally {
      await server.close();
    }
  });

  it("exits 2 with one line when the OpenAPI document cannot be read or parsed", async () => {
    const { startReferenceServer } = await import("../../../reference-server/start.js");
    const server = await startReferenceServer({ grpcPort: 0, httpPort: 0, log: "silent" });
    try {
      const missing = await cli(["check", "--http", server.httpUrl, "--openapi", join(out, "none.yaml")]);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(
        /^example-conformance: --openapi .*none\.yaml: no such file, and GET .* on the target got 404\n$/,
      );
      const bad = join(out, "bad.json");
      writeFileSync(bad, JSON.stringify({ openapi: "3.0.0" }));
      const noPaths = await cli(["check", "--http", server.httpUrl, "--openapi", bad]);
      expect(noPaths.code).toBe(2);
      expect(noPaths.stderr).toMatch(
        /^example-conformance: --openapi .*bad\.json: the document has no "paths" object\n$/,
      );
    } finally {
      await server.close();
    }
  });

  it("exits 3 within the timeout for an HTTP target that is not there", async () => {
    const run = await cli(["check", "--http", "http://127.0.0.1:1", "--timeout", "2s"]);
    expect(run).toMatchObject({ code: 3, stdout: "" });
    expect(run.stderr).toMatch(/^example-conformance: cannot reach http:\/\/127\.0\.0\.1:1: ECONNREFUSED.*\n$/);
  });

  it.each([
    [["--http", "ftp://host"], /--http ftp:\/\/host: only http and https URLs are supported/],
    [["--http", "not a url"], /--http not a url: not a valid URL/],
    [["--http", "http://u:p@127.0.0.1:2"], /credentials in the URL are not supported/],
    [["--collection", "/messages"], /--collection needs --http \(or --image with --http-port\)/],
    [["--api-key", "k"], /--api-key needs --http/],
    [["--http", "http://127.0.0.1:2", "--collection", "messages"], /--collection messages: expected a path/],
    [
      ["--http", "http://127.0.0.1:2", "--api-key-header", "bad header"],
      /--api-key-header bad header: not a valid HTTP header name/,
    ],
    [["--allow-word", "options"], /--allow-word needs --http/],
  ] as [string[], RegExp][])("exits 2 with one line for %j", async (args, message) => {
    const run = await cli(["check", ...args]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toMatch(message);
  });
});
