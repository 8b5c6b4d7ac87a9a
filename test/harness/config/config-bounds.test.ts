// Configuration files under the 1 MiB cap that try to exhaust the harness: nested 500,000 deep, 60,000 keys wide, a
// billion laughs of aliases, and half a million stray tokens. Each, through the CLI as its own process, is refused
// with exit 2 and one line naming the file, the line and the limit, ends well within a generous bound and keeps its
// peak RSS (VmHWM) modest; a file just within each limit is still read.
import fc from "fast-check";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseDocument, stringify } from "yaml";
import { afterAll, describe, expect, it } from "vitest";
import { CONFIG_LIMITS, parseConfigYaml, type ConfigLimits } from "../../../harness/config/bounded-yaml.js";
import { loadConfigFile } from "../../../harness/config/config-file.js";
import { ConformanceError } from "../../../harness/errors.js";
import { cli } from "../../helpers/cli.js";
import { runMeasured } from "../../helpers/measured-cli.js";

const dir = mkdtempSync(join(tmpdir(), "config-bounds-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const write = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  expect(Buffer.byteLength(text)).toBeLessThanOrEqual(1 << 20);
  return path;
};
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * A bound on the CPU a refusal spends, generous (a refusal took 0.45 CPU-s, mostly the CLI starting): in CPU, not
 * wall time, which a loaded machine stretches (33.6 s at load 18, past the 30 s wall bound this was). The backstop
 * bounds the wall time.
 */
const CPU_WITHIN_MS = 30_000;
const BACKSTOP_MS = 90_000;
/** Modest: a quarter of the 512 MiB docs/reliability.md bounds a run to (the CLI alone peaks near 100 MiB). */
const MODEST_RSS_MIB = 256;

/** `check --config FILE` as its own process: exit 2, the one line `example-conformance: FILE:LINE: why`, in bounds. */
async function refused(path: string, line: number, why: RegExp): Promise<void> {
  const run = await runMeasured(["check", "--config", path], {}, BACKSTOP_MS);
  expect(run.signal, "killed by the backstop: the refusal did not end").toBeNull();
  expect(run.stderr).toMatch(new RegExp(`^example-conformance: ${escapeRegExp(path)}:${line}: ${why.source}\n$`));
  expect(run.code).toBe(2);
  expect(run.cpuMs, `spent ${run.cpuMs} ms of CPU`).toBeGreaterThan(0);
  expect(run.cpuMs, `spent ${run.cpuMs} ms of CPU (${run.ms} ms of wall time)`).toBeLessThan(CPU_WITHIN_MS);
  expect(run.peakRssMib).toBeGreaterThan(0);
  expect(run.peakRssMib, `peak RSS ${run.peakRssMib} MiB`).toBeLessThan(MODEST_RSS_MIB);
}

describe(
  "a hostile configuration file is refused quickly, in modest memory, with exit 2 and one line naming the file, " +
    "the line and the limit",
  () => {
    it(
      "nested 500,000 levels deep: refused at the line of the 65th level",
      async () => {
        // A map (level 1), then 63 brackets a line (levels 2..64): the 64th bracket, on line 67, is level 65.
        const head = ["implementation:", "  name: deep", "targets:", ...Array.from({ length: 64 }, () => "  [")];
        const levels = 500_000;
        const path = write("deep.yaml", `${head.join("\n")}${"[".repeat(levels - 64)}${"]".repeat(levels)}\n`);
        await refused(path, 67, /nested deeper than a configuration needs \(at most 64 levels\)/);
      },
      BACKSTOP_MS,
    );

    it(
      "of 60,000 keys: refused at the line of the 10,001st, in linear time",
      async () => {
        const path = write("wide.yaml", Array.from({ length: 60_000 }, (_, i) => `key${i}: ${i}\n`).join(""));
        await refused(path, 10_001, /more keys and items than a configuration needs \(at most 10000 in all\)/);
      },
      BACKSTOP_MS,
    );

    it(
      "a billion laughs (1.7 KB of aliases, each level ten of the last): refused at the line where they pass 10,000",
      async () => {
        const laughs = ["lol0: &lol0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"];
        for (let i = 1; i < 10; i++)
          laughs.push(`lol${i}: &lol${i} [${Array.from({ length: 10 }, () => `*lol${i - 1}`).join(", ")}]`);
        const text = `${laughs.join("\n")}\n`;
        expect(text.length).toBeLessThan(2_000);
        // 10 keys, then lol0 10 items, lol1 110 and lol2 1,110 with their aliases repeated: lol3 passes 10,000.
        await refused(
          write("laughs.yaml", text),
          4,
          /more keys and items than a configuration needs, each alias counted as all it repeats \(at most 10000 in all\)/,
        );
      },
      BACKSTOP_MS,
    );

    it(
      "half a million stray brackets, or 330,000 anchors on one value: refused at the first error, not one error each",
      async () => {
        // The parser's errors between documents, and the composer's within one: yaml would make an Error (with its
        // stack) for each.
        const brackets = write("stray-brackets.yaml", `targets:\n  replicas: [a]\n${"]\n".repeat(500_000)}`);
        await refused(brackets, 3, /not valid YAML: Unexpected flow-seq-end token in YAML stream: "\]"/);
        const anchors = write("anchors.yaml", `targets:\n  grpc: ${"&x ".repeat(330_000)}127.0.0.1:1\n`);
        await refused(anchors, 2, /not valid YAML: A node can have at most one anchor/);
      },
      BACKSTOP_MS,
    );
  },
);

/** The file's value, or the one line of its refusal (the file's name left out). */
function parse(text: string, limits?: ConfigLimits): { value: unknown } | { refused: string } {
  try {
    return { value: parseConfigYaml(text, "f.yaml", limits).value };
  } catch (err) {
    if (!(err instanceof ConformanceError)) throw err;
    return { refused: err.message.replace(/^f\.yaml:/, "") };
  }
}

describe("a file just within each limit is read", () => {
  it("nested 64 levels deep: read; 65: refused at the line of the 65th", () => {
    const nested = (levels: number) =>
      `${Array.from({ length: levels }, (_, i) => `${"  ".repeat(i)}- `).join("\n")}x\n`;
    const value = parse(nested(64));
    let expected: unknown = "x";
    for (let i = 0; i < 64; i++) expected = [expected];
    expect(value).toEqual({ value: expected });
    expect(parse(nested(65))).toEqual({ refused: "65: nested deeper than a configuration needs (at most 64 levels)" });
  });

  it("10,000 keys and items: read; 10,001: refused at the line of the 10,001st, in block or flow style", () => {
    const block = (n: number) => Array.from({ length: n }, (_, i) => `- ${i}\n`).join("");
    expect(parse(block(10_000))).toEqual({ value: Array.from({ length: 10_000 }, (_, i) => i) });
    expect(parse(block(10_001))).toEqual({
      refused: "10001: more keys and items than a configuration needs (at most 10000 in all)",
    });
    // 100 keys of 99 items each: 9,900 + 100 = 10,000.
    const flow = (keys: number, items: number) =>
      Array.from(
        { length: keys },
        (_, k) => `k${k}: [${Array.from({ length: items }, (_, i) => i).join(", ")}]\n`,
      ).join("");
    expect(parse(flow(100, 99))).toHaveProperty(
      "value.k99",
      Array.from({ length: 99 }, (_, i) => i),
    );
    expect(parse(`${flow(100, 99)}one: more\n`)).toEqual({
      refused: "101: more keys and items than a configuration needs (at most 10000 in all)",
    });
    // A trailing comma or comment opens no entry.
    expect(parse(`${flow(100, 99)}# the end\n`)).toHaveProperty("value.k0");
    expect(parse(`a: [${Array.from({ length: 9_999 }, (_, i) => `${i}, `).join("")}]\n`)).toHaveProperty("value.a");
  });

  it(
    "aliases repeating 10,000 keys and items in all: read; one more alias, or one more item repeated: refused at " +
      "its line",
    () => {
      // A key, a list of the anchored list and A aliases of it, I items each: 1 + (1 + A) + (1 + A) * I in all.
      const list = (aliases: number, items: number) =>
        `all:\n  - &a ` +
        `[${Array.from({ length: items }, (_, i) => i).join(", ")}]\n${Array.from({ length: aliases }, () => "  - *a\n").join("")}`;
      expect(parse(list(98, 100))).toHaveProperty(
        "value.all.98",
        Array.from({ length: 100 }, (_, i) => i),
      );
      const passed =
        "more keys and items than a configuration needs, each alias counted as all it repeats (at most 10000 in all)";
      // One more alias is one more item of the list too: the 98th passes.
      expect(parse(list(99, 100))).toEqual({ refused: `100: ${passed}` });
      expect(parse(list(98, 101))).toEqual({ refused: `100: ${passed}` });
      // Aliases of a scalar repeat nothing, but there may be 100 of them.
      const scalars = (n: number) => `a: &s x\nb: [${Array.from({ length: n }, () => "*s").join(", ")}]\n`;
      expect(parse(scalars(100))).toHaveProperty("value.b.99", "x");
      expect(parse(scalars(101))).toEqual({ refused: "2: more aliases than a configuration needs (at most 100)" });
    },
  );

  it("counts exactly: any document is read at its own depth and count, and refused one below either", () => {
    const leaf = fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.boolean(), fc.constant(null));
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: "small" },
        leaf,
        fc.array(tie("value"), { maxLength: 4 }),
        fc.dictionary(fc.string({ minLength: 1, maxLength: 4 }), tie("value"), { maxKeys: 4 }),
      ),
    }));
    const style = fc.constantFrom(
      {},
      { collectionStyle: "flow" as const },
      { indentSeq: false },
      { defaultStringType: "QUOTE_DOUBLE" as const },
    );
    fc.assert(
      fc.property(value, style, fc.boolean(), (v, options, comments) => {
        let text = stringify(v, options);
        if (comments) text = text.replace(/\n/g, " # c\n# line\n");
        // The comments can make a flow collection no YAML: only what yaml reads is counted.
        fc.pre(parseDocument(text).errors.length === 0);
        let depth = 0;
        let entries = 0;
        const walk = (x: unknown, level: number) => {
          if (x === null || typeof x !== "object") return;
          depth = Math.max(depth, level);
          const children = Object.values(x);
          entries += children.length;
          for (const c of children) walk(c, level + 1);
        };
        walk(v, 1);
        expect(parse(text, { ...CONFIG_LIMITS, depth, entries }), text).toEqual({ value: v });
        if (depth > 0)
          expect(parse(text, { ...CONFIG_LIMITS, depth: depth - 1 })).toHaveProperty(
            "refused",
            expect.stringMatching(/: nested deeper than/),
          );
        if (entries > 0)
          expect(parse(text, { ...CONFIG_LIMITS, entries: entries - 1 })).toHaveProperty(
            "refused",
            expect.stringMatching(/: more keys and items than/),
          );
      }),
      { numRuns: 300 },
    );
  });

  it("the largest configuration the schema allows, with a reason shared by 100 aliases, is read", () => {
    const failures = Array.from({ length: 1024 }, (_, i) =>
      i === 0
        ? `  - check: grpc.c${i}\n    reason: &why the library accepts it\n    expires: 2999-01-01\n`
        : `  - check: grpc.c${i}\n    reason: ${i <= 100 ? "*why" : "listed"}\n    expires: 2999-01-01\n`,
    );
    const list = (key: string, n: number) =>
      `${key}:\n${Array.from({ length: n }, (_, i) => `  - ${key}-${i}\n`).join("")}`;
    const text = [
      "implementation: { name: big, version: 1.0.0, url: https://example.com }\n",
      `targets:\n  grpc: 127.0.0.1:1\n  http: http://127.0.0.1:2\n  ` +
        `${list("replicas", 256).replace(/\n {2}/g, "\n    ")}  ` +
        `${list("http-replicas", 256).replace(/\n {2}/g, "\n    ")}`,
      `credentials:\n  api-key-env: KEY\n  metadata-env: ` +
        `[${Array.from({ length: 64 }, (_, i) => `M${i}`).join(", ")}]\n`,
      `expected-failures:\n${failures.join("")}`,
      list("only", 256),
      list("skip", 256),
      "profile: contract\nstrict: true\nload:\n  slo: p99<20ms\n",
    ].join("");
    const config = loadConfigFile(write("largest.yaml", text));
    expect(config["expected-failures"]).toHaveLength(1024);
    expect(config["expected-failures"]?.[100]).toMatchObject({ check: "grpc.c100", reason: "the library accepts it" });
    expect(config["expected-failures"]?.[1023]?.line).toBe(text.split("\n").indexOf("  - check: grpc.c1023") + 1);
    expect(config.targets?.["http-replicas"]).toHaveLength(256);
    expect(config.only).toHaveLength(256);
  });

  it("through the CLI, a file within the limits gets as far as the schema, which names its line and key", async () => {
    const deep = await cli([
      "check",
      "--config",
      write("deep-64.yaml", `implementation:\n  name: ${"[".repeat(62)}${"]".repeat(62)}\n`),
    ]);
    expect(deep.code).toBe(2);
    expect(deep.stderr).toMatch(/deep-64\.yaml:2: implementation\.name: must be string\n$/);
    const wide = await cli([
      "check",
      "--config",
      write("wide-10000.yaml", `only:\n${Array.from({ length: 9_999 }, (_, i) => `  - c${i}\n`).join("")}`),
    ]);
    expect(wide.code).toBe(2);
    expect(wide.stderr).toMatch(/wide-10000\.yaml:2: only: must NOT have more than 256 items\n$/);
  });
});
