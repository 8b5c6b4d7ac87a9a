// The Node versions package.json declares are the ones every dependency accepts: `npm ci` on any of them prints no
// EBADENGINE, and the machine running the tests is one of them.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");
// semver, already in node_modules (a dependency of the toolchain); typed here for what the test uses.
const semver = createRequire(import.meta.url)("semver") as {
  validRange(range: string): string | null;
  satisfies(version: string, range: string): boolean;
  subset(sub: string, dom: string): boolean;
  minVersion(range: string): { version: string } | null;
};
const declared = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { engines: { node: string } }).engines
  .node;
const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
  packages: Record<string, { engines?: { node?: string } | string[] }>;
};
/** Every locked package that declares the Node versions it supports (an old array form aside, which npm ignores). */
const engines = Object.entries(lock.packages).flatMap(([path, entry]) => {
  const node = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
  return path !== "" && node !== undefined ? [{ path, node }] : [];
});

describe("engines", () => {
  it("declares a valid range that the running Node satisfies", () => {
    expect(semver.validRange(declared)).not.toBeNull();
    expect(semver.satisfies(process.version, declared), `${process.version} is outside ${declared}`).toBe(true);
    expect(engines.length).toBeGreaterThan(10);
  });

  it("is accepted whole by every locked dependency's engines.node, its lowest version and the running one too", () => {
    const lowest = semver.minVersion(declared)?.version ?? "";
    const refused = engines.filter(
      (e) =>
        !semver.subset(declared, e.node) ||
        !semver.satisfies(lowest, e.node) ||
        !semver.satisfies(process.version, e.node),
    );
    expect(refused.map((e) => `${e.path} wants node ${e.node}`)).toEqual([]);
  });
});
