// Targets that put terminal escapes, forged lines, workflow commands, CDATA ends, invalid XML characters, markup
// and megabyte strings on every text channel: the real CLI, with every report format and under GitHub Actions,
// must print none of it raw, write reports that parse, and give the real exit code and summary line.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RAW_BYTES_FORBIDDEN } from "../../fixtures/hostile-targets/payloads.js";
import { startHostileGrpcText, startHostileHttpText } from "../../fixtures/hostile-targets/text-channels.js";
import type { TrackedServer } from "../../fixtures/_internals/listen-tracked.js";
import type { RunReport } from "../../harness/report.js";
import { runCliProcess, type CliProcessRun } from "../helpers/cli-process.js";
import { withoutProgress } from "../helpers/cli.js";

let grpc: TrackedServer;
let http: TrackedServer & { url: string };
const dir = mkdtempSync(join(tmpdir(), "hostile-text-"));
const files = {
  json: join(dir, "r.json"),
  junit: join(dir, "r.xml"),
  html: join(dir, "r.html"),
  summary: join(dir, "summary.md"),
};
let run: CliProcessRun;

beforeAll(async () => {
  grpc = await startHostileGrpcText();
  http = await startHostileHttpText();
  writeFileSync(files.summary, "");
  run = await runCliProcess(
    [
      "check",
      "--grpc",
      grpc.address,
      "--http",
      http.url,
      "--timeout",
      "2s",
      "--seed",
      "1",
      "--runs",
      "5",
      "--report-json",
      files.json,
      "--report-junit",
      files.junit,
      "--report-html",
      files.html,
    ],
    { GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: files.summary },
  );
}, 120_000);
afterAll(async () => {
  await grpc?.close();
  await http?.close();
});

/** Every line that begins with "::" is an annotation of the product's own: error or warning, with a title. */
function ownAnnotationsOnly(text: string): void {
  for (const line of text.split("\n").filter((l) => l.startsWith("::")))
    expect(line).toMatch(/^::(error|warning) title=[^:\n]*::[^\n]*$/);
}

describe("check against targets whose every text channel is hostile", () => {
  it("ends with the real verdict: exit 1 and the last line its own summary", () => {
    expect(run.signal).toBeNull();
    expect(run.code).toBe(1);
    expect(withoutProgress(run.stderr)).toBe("");
    const report = JSON.parse(readFileSync(files.json, "utf8")) as RunReport;
    const gating = report.checks.filter((c) => c.gating).length;
    expect(gating).toBeGreaterThan(5);
    expect(run.stdout.trimEnd().split("\n").at(-1)).toBe(`not conformant: ${gating} gating check(s) failed (seed 1)`);
    expect(run.stdout.match(/^(not )?conformant/gm)).toEqual(["not conformant"]);
  });

  it("the target's words did reach the output, neutralised (the channels were live)", () => {
    expect(run.stdout).toContain("\\x1b[2K");
    expect(run.stdout).toContain("\\u202e");
    expect(run.stdout).toMatch(/\.\.\. \(\d+ more bytes\)/);
  });

  it(
    "stdout and stderr hold no ESC, CR, C1, bidi override, NUL or noncharacter, and no line-start :: but the " +
      "product's",
    () => {
      for (const b of RAW_BYTES_FORBIDDEN) {
        expect(run.stdout.includes(b), `stdout holds ${JSON.stringify(b)}`).toBe(false);
        expect(run.stderr.includes(b), `stderr holds ${JSON.stringify(b)}`).toBe(false);
      }
      ownAnnotationsOnly(run.stdout);
      ownAnnotationsOnly(run.stderr);
      expect(run.stdout).not.toMatch(/^::(add-mask|stop-commands)/m);
      // A line per text: no line longer than a cut message with its escapes and the check's own words.
      expect(Math.max(...run.stdout.split("\n").map((l) => l.length))).toBeLessThan(6000);
    },
  );

  it("the JUnit file parses, with exactly one testcase per check and no forged one", () => {
    const xml = readFileSync(files.junit, "utf8");
    expect(XMLValidator.validate(xml)).toBe(true);
    const doc = new XMLParser({ ignoreAttributes: false, isArray: (n) => n === "testcase" || n === "testsuite" }).parse(
      xml,
    ) as {
      testsuites: { testsuite: { testcase: { "@_name": string }[] }[] };
    };
    const names = doc.testsuites.testsuite.flatMap((s) => s.testcase.map((c) => c["@_name"]));
    const report = JSON.parse(readFileSync(files.json, "utf8")) as RunReport;
    expect(names.sort()).toEqual(report.checks.map((c) => `${c.id} [${c.severity}]`).sort());
    // eslint-disable-next-line no-control-regex
    expect(xml).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/);
  });

  it("the HTML page has no raw control character and no executable markup", () => {
    const html = readFileSync(files.html, "utf8");
    // eslint-disable-next-line no-control-regex
    expect(html).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202e\u2066\ufffe\uffff]/);
    expect(html).not.toMatch(/<(script|img|iframe|a|object|embed)\b/i);
    expect(html).not.toMatch(/<[^>]*\s(on\w+|src|href)=/i);
    expect(html).toContain("&lt;script&gt;");
    expect(html).toMatch(/Not conformant: \d+ gating check\(s\) failed/);
  });

  it("the job summary names the verdict and carries no markup or control character of the target's", () => {
    const md = readFileSync(files.summary, "utf8");
    expect(md).toMatch(/^### example-conformance: not conformant$/m);
    // eslint-disable-next-line no-control-regex
    expect(md).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e\ufffe]/);
    expect(md).not.toMatch(/<(script|img)\b/i);
    ownAnnotationsOnly(md);
  });

  it("the JSON report keeps the target's text whole, escaped by JSON", () => {
    const raw = readFileSync(files.json, "utf8");
    expect(raw).not.toContain("\x1b");
    const report = JSON.parse(raw) as RunReport;
    expect(report.checks.map((c) => c.message).join("\n")).toContain("\x1b]52;c;");
  });
});

describe("a report document written to stdout under GitHub Actions", () => {
  it.each(["junit", "html"])(
    "--reporter %s: no line of it is a workflow command, nor holds a raw control byte",
    async (reporter) => {
      const doc = await runCliProcess(
        ["check", "--grpc", grpc.address, "--http", http.url, "--timeout", "2s", "--seed", "1", "--reporter", reporter],
        { GITHUB_ACTIONS: "true" },
      );
      expect(doc.code).toBe(1);
      expect(doc.stdout).toContain("stop-commands");
      expect(doc.stdout).not.toMatch(/^::/m);
      for (const b of RAW_BYTES_FORBIDDEN) expect(doc.stdout + doc.stderr).not.toContain(b);
    },
  );
});

describe("load against a hostile gRPC target", () => {
  it("reports the errors it answers with, by status, inert, exit 1 (it answered: it is not unreachable)", async () => {
    const load = await runCliProcess(["load", "--grpc", grpc.address, "--duration", "1s", "--timeout", "2s"], {
      GITHUB_ACTIONS: "true",
    });
    expect(load.code).toBe(1);
    for (const b of RAW_BYTES_FORBIDDEN) expect(load.stdout + load.stderr).not.toContain(b);
    expect(load.stdout).toMatch(/^errors\s+\S+ \d+/m);
    ownAnnotationsOnly(load.stdout + load.stderr);
  });
});
