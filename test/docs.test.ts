// Generated documentation stays true to the code.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { renderChecksMarkdown } from "../harness/docs.js";
import { PACKAGE_ROOT } from "../common/paths.js";
import { renderDefectsMarkdown } from "../fixtures/defects.js";
import { REPORTER_NAMES } from "../harness/reporters/index.js";
import { catalogue, grpcChecks, httpChecks } from "../suites/index.js";
import { GOLDEN_DIR, loadGoldenCases } from "../suites/grpc/golden.js";
import { clientChecks } from "../suites/client/index.js";
import { renderClientChecksMarkdown } from "../suites/client/docs.js";
import { createProgram } from "../harness/cli/main.js";

describe("docs/checks.md", () => {
  it("lists exactly the catalogue (run `npm run docs` after changing a check)", () => {
    expect(readFileSync(join(PACKAGE_ROOT, "docs", "checks.md"), "utf8")).toBe(
      `${renderChecksMarkdown(catalogue)}\n${renderClientChecksMarkdown(clientChecks)}`,
    );
  });

  it("docs/defects.md lists exactly the fixtures' defects (run `npm run docs` after changing a fixture)", () => {
    expect(readFileSync(join(PACKAGE_ROOT, "docs", "defects.md"), "utf8")).toBe(
      renderDefectsMarkdown({ grpc: grpcChecks, http: httpChecks }),
    );
  });

  it("has unique, stable-looking check IDs", () => {
    const ids = catalogue.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^(contract|grpc|connect|grpc-web|http|rpc)\.[a-z0-9-]+(\.[a-z0-9-]+)*$/);
    // check-client's checks, spelled the same way.
    for (const { id } of clientChecks) expect(id).toMatch(/^client\.[a-z0-9-]+(\.[a-z0-9-]+)*$/);
  });
});

describe("docs/architecture.md", () => {
  const text = readFileSync(join(PACKAGE_ROOT, "docs", "architecture.md"), "utf8");

  it("names only files that exist, except on lines that say the file is planned", () => {
    const named = text
      .split("\n")
      .flatMap((line) =>
        [...line.matchAll(/`((?:contract|harness|suites|fixtures|docs|test|reference-server)\/[\w./-]*\w)`/g)].map(
          (m) => ({ line, path: m[1] as string }),
        ),
      );
    expect(named.length).toBeGreaterThan(15);
    const missing = named.filter(
      ({ line, path }) => !path.includes("<") && !/\bplanned\b/.test(line) && !existsSync(join(PACKAGE_ROOT, path)),
    );
    expect(missing.map((m) => m.path)).toEqual([]);
    const planned = named.filter(({ line }) => /\bplanned\b/.test(line) && !line.startsWith("#")).map((m) => m.path);
    for (const path of planned.filter((p) => !p.includes("<") && p.startsWith("harness/targets/")))
      expect(existsSync(join(PACKAGE_ROOT, path)), `${path} exists: the page should no longer call it planned`).toBe(
        false,
      );
  });

  it("names, as bare file names, only files of the engine, the checks or the common module", () => {
    const files = new Set(
      ["harness", "suites", "common"].flatMap((dir) =>
        readdirSync(join(PACKAGE_ROOT, dir), { recursive: true, encoding: "utf8" }).map((f) => f.split("/").pop()),
      ),
    );
    const bare = [...text.matchAll(/`([\w-]+\.ts)`/g)].map((m) => m[1] as string);
    expect(bare.length).toBeGreaterThan(10);
    expect(bare.filter((f) => !files.has(f))).toEqual([]);
  });

  it(
    "counts a single-request case as one file: every case file in fixtures/golden/grpc is a check of the " +
      "catalogue, with no code",
    () => {
      expect(text).toMatch(/\| a single-request case \| 1 \| `fixtures\/golden\/grpc\/<name>\.json`/);
      const files = readdirSync(GOLDEN_DIR).filter((f) => f.endsWith(".json"));
      const ids = loadGoldenCases().map((c) => c.id ?? `grpc.golden.${c.name}`);
      expect(ids).toHaveLength(files.length);
      const inCatalogue = new Set(grpcChecks.map((c) => c.id));
      expect(ids.filter((id) => !inCatalogue.has(id))).toEqual([]);
    },
  );

  it("lists every reporter in the map", () => {
    for (const name of REPORTER_NAMES) expect(text).toContain(name);
  });
});

/** The manual and its reference pages: README.md and every page in docs/. */
const PAGES = [
  "README.md",
  ...readdirSync(join(PACKAGE_ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

/** A page split into its prose and the lines of its fenced code blocks. */
function split(page: string): { prose: string; code: string[] } {
  const prose: string[] = [];
  const code: string[] = [];
  let fenced = false;
  for (const line of readFileSync(join(PACKAGE_ROOT, page), "utf8").split("\n")) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    else (fenced ? code : prose).push(line);
  }
  return { prose: prose.join("\n"), code };
}

/** GitHub's anchors for a page's headings: lowercase, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchors(page: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading] of split(page).prose.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = (heading as string)
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

describe("the README and docs/", () => {
  it("link only to files and headings that exist", () => {
    const broken: string[] = [];
    let checked = 0;
    for (const page of PAGES) {
      // Inline code is not a link: `[x](y)` inside backticks is left alone.
      const prose = split(page).prose.replace(/`[^`]*`/g, "");
      for (const [, target] of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^(https?|mailto):/.test(target as string)) continue;
        checked++;
        const [path, anchor] = (target as string).split("#") as [string, string | undefined];
        const file = path === "" ? page : relative(PACKAGE_ROOT, join(PACKAGE_ROOT, dirname(page), path));
        if (!existsSync(join(PACKAGE_ROOT, file))) broken.push(`${page}: ${target} (no file ${file})`);
        else if (
          anchor !== undefined &&
          !(file.endsWith(".md") && statSync(join(PACKAGE_ROOT, file)).isFile() && anchors(file).has(anchor))
        )
          broken.push(`${page}: ${target} (no heading #${anchor} in ${file})`);
      }
    }
    expect(checked).toBeGreaterThan(40);
    expect(broken).toEqual([]);
  });

  it("name only flags that the command named before them takes", async () => {
    const silent = { stdout: () => undefined, stderr: () => undefined, isTty: false, env: {} };
    const program = await createProgram(silent, () => undefined);
    const flagsOf = (cmd: Command): Set<string> =>
      new Set(["--help", ...cmd.options.flatMap((o) => (o.long === undefined ? [] : [o.long]))]);
    const commands = new Map<string, Set<string>>();
    for (const cmd of program.commands) {
      commands.set(cmd.name(), flagsOf(cmd));
      for (const sub of cmd.commands) commands.set(`${cmd.name()} ${sub.name()}`, flagsOf(sub));
    }
    expect([...commands.keys()]).toEqual(
      expect.arrayContaining([
        "check",
        "check-client",
        "lint",
        "breaking",
        "serve",
        "load",
        "load merge",
        "verify",
        "diff",
      ]),
    );
    const names = [...commands.keys()]
      .sort((a, b) => b.length - a.length)
      .map((n) => n.replace(" ", "\\s+"))
      .join("|");
    const invocation = new RegExp(`\\bexample-conformance\\s+(${names})(?![\\w-])([^\\n]*)`, "g");
    const wrong: string[] = [];
    let checked = 0;
    for (const page of PAGES) {
      const { prose, code } = split(page);
      // A command in prose is an inline code span (it may wrap); in a code block, a line.
      const texts = [
        ...[...prose.matchAll(/`([^`]+)`/g)].map((m) => (m[1] as string).replace(/\s*\n\s*/g, " ")),
        ...code,
      ];
      for (const text of texts) {
        for (const [, name, rest] of text.matchAll(invocation)) {
          // The command's own words end at a comment, a pipe, a list of commands, or the client's `--`.
          const own = (rest as string).split(/\s#|\s\|\s|\s&&|;|\s--\s|\s&$/)[0] as string;
          const command = (name as string).replace(/\s+/, " ");
          for (const [flag] of own.matchAll(/(?<![\w-])--[a-z][a-z0-9-]*/g)) {
            checked++;
            if (!commands.get(command)?.has(flag)) wrong.push(`${page}: example-conformance ${command} ${flag}`);
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
    expect(wrong).toEqual([]);
  });
});
