// The options of `check` parsed from argv alone: typed values, defaults, one-line usage errors, and a replay line
// that parses back to the same run.
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { CHECK_TABLE, parseCheckArgs } from "../../../harness/cli/check-options.js";
import { toOption } from "../../../harness/cli/option-table.js";
import { createReplayRenderer } from "../../../harness/cli/replay.js";
import { ConformanceError } from "../../../harness/errors.js";

describe("parseCheckArgs", () => {
  it("gives the defaults with no argument", () => {
    expect(parseCheckArgs([])).toEqual({
      replica: [],
      replicaMode: "stateless",
      collection: [],
      httpReplica: [],
      filter: [],
      verbs: [],
      allowWord: [],
      env: [],
      metadata: [],
      metadataFromEnv: [],
      metadataFile: [],
      timeout: 5000,
      only: [],
      skip: [],
      runs: 100,
      concurrency: 8,
      profile: "contract",
      reporter: [],
    });
  });

  it("types every value: durations in ms, numbers, lists, reporters", () => {
    const opts = parseCheckArgs([
      "--grpc",
      "h:1",
      "--timeout=1.5s",
      "--runs",
      "7",
      "--only",
      "a.*,b",
      "--only",
      "c",
      "--metadata",
      "k=v",
      "--metadata",
      "k2=v=2",
      "--reporter",
      "json=r.json",
      "--report-junit",
      "r.xml",
      "--tls",
      "--profile",
      "protocol",
      "--verbs",
      "make,do",
    ]);
    expect(opts).toMatchObject({
      grpc: "h:1",
      timeout: 1500,
      runs: 7,
      only: ["a.*", "b", "c"],
      metadata: ["k=v", "k2=v=2"],
      reportJunit: "r.xml",
      tls: true,
      profile: "protocol",
      verbs: ["make", "do"],
    });
    expect(opts.reporter).toEqual([{ name: "json", path: "r.json", flag: "--reporter json=" }]);
  });

  it.each([
    [["--runs", "0"], /^option '--runs <n>' argument '0' is invalid\. --runs must be between 1 and 100000, got 0$/],
    [["--timeout", "5"], /--timeout 5: give a unit/],
    [["--replica-mode", "some"], /--replica-mode.*some.*Allowed choices are stateless, equal/],
    [["--reporter", "xml=r.xml"], /unknown reporter "xml"; known: console, github, json, junit, html/],
    [["--gprc", "h:1"], /unknown option '--gprc'/],
  ])("refuses %j as a usage error", (argv, message) => {
    let caught: unknown;
    try {
      parseCheckArgs(argv);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConformanceError);
    expect((caught as ConformanceError).exitCode).toBe(2);
    expect((caught as ConformanceError).message).toMatch(message);
  });
});

describe("the option table", () => {
  it("files every option under the name commander gives it, and refuses one filed wrongly", () => {
    for (const [key, spec] of Object.entries(CHECK_TABLE)) expect(toOption(key, spec).attributeName()).toBe(key);
    expect(() => toOption("timeoutMs", CHECK_TABLE.timeout)).toThrow(/--timeout <duration> is filed under timeoutMs/);
  });

  it(
    "renders a replay line that parses back to the same run, with --only and --seed named anew and reporters left " +
      "out",
    () => {
      const argv = [
        "--grpc",
        "h:1",
        "--replica=h:2",
        "--http",
        "http://127.0.0.1:9/p",
        "--collection",
        "/messages",
        "--timeout",
        "3s",
        "--runs",
        "9",
        "--strict",
        "--profile",
        "protocol",
        "--rate",
        "5",
        "--max-rpcs",
        "50",
        "--only",
        "grpc.*",
        "--seed",
        "1",
        "--report-json",
        "r.json",
        "--reporter",
        "junit=r.xml",
        "--skip",
        "contract.*",
      ];
      const line = createReplayRenderer(argv, CHECK_TABLE)({ only: "grpc.defaults.omitted", seed: 4 });
      // Split as a shell reads it, quoting and all.
      const replayed = execFileSync(
        "sh",
        ["-c", `printf '%s\\0' ${line.replace(/^npx example-conformance check /, "")}`],
        { encoding: "utf8" },
      )
        .split("\0")
        .slice(0, -1);
      const { reportJson: _json, reporter: _reporters, ...original } = parseCheckArgs(argv);
      expect(parseCheckArgs(replayed)).toEqual({ ...original, only: ["grpc.defaults.omitted"], seed: 4, reporter: [] });
    },
  );
});
