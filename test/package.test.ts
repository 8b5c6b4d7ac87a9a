// The package as a user gets it: packed, installed into an empty project with no registry, its CLI and typed API used.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "..");
// Nothing listens there: any request npm makes to a registry fails at once.
const NO_REGISTRY = "http://127.0.0.1:9";
const npmEnv = {
  ...process.env,
  npm_config_registry: NO_REGISTRY,
  npm_config_audit: "false",
  npm_config_fund: "false",
  npm_config_update_notifier: "false",
};
/**
 * The consumer installs from the lock below, offline: npm takes every package from the tarballs its cache holds (filled
 * by `npm ci`, keyed by integrity); the dead proxy would refuse any request that left.
 */
const consumerEnv = {
  ...npmEnv,
  npm_config_registry: "https://registry.npmjs.org/",
  npm_config_proxy: NO_REGISTRY,
  npm_config_https_proxy: NO_REGISTRY,
};
// semver, already in node_modules (a dependency of the toolchain); typed here for what the test uses.
const semver = createRequire(import.meta.url)("semver") as {
  subset(sub: string, dom: string): boolean;
  satisfies(version: string, range: string): boolean;
};

let project: string;
let files: string[];
let installLog = "";

type LockEntry = { dev?: boolean; link?: boolean; [field: string]: unknown };

/**
 * A lock for a project that depends on the packed package alone: ours, with the package at its root's place, less our
 * development's packages and links (the contract's buf plugin, a folder of this repository).
 */
function consumerLock(dependency: string, integrity: string): object {
  const ours = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
    packages: Record<string, LockEntry>;
  };
  const { devDependencies: _, ...root } = ours.packages[""] as LockEntry;
  const packages: Record<string, LockEntry> = {
    "": { name: "consumer", dependencies: { "example-conformance": dependency } },
    "node_modules/example-conformance": { ...root, name: undefined, resolved: dependency, integrity },
  };
  for (const [path, entry] of Object.entries(ours.packages))
    if (path.startsWith("node_modules/") && entry.dev !== true && entry.link !== true) packages[path] = entry;
  return { name: "consumer", lockfileVersion: 3, requires: true, packages };
}

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), "consumer-"));
  const packed = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", project], {
    cwd: ROOT,
    env: npmEnv,
    maxBuffer: 1 << 24,
  });
  const [info] = JSON.parse(packed.stdout) as [{ filename: string; integrity: string; files: { path: string }[] }];
  files = info.files.map((f) => f.path);
  // The consumer's tree is the one our lock resolved, less what only our development needs. Resolving the package's
  // ranges afresh needs the registry's metadata, which a machine without the registry may not have cached (npm ci
  // caches tarballs, not metadata: a fresh machine refused with ENOTCACHED).
  const dependency = `file:${info.filename}`;
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({
      name: "consumer",
      private: true,
      type: "module",
      dependencies: { "example-conformance": dependency },
    }),
  );
  writeFileSync(join(project, "package-lock.json"), JSON.stringify(consumerLock(dependency, info.integrity)));
  const installed = await run("npm", ["ci", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"], {
    cwd: project,
    env: consumerEnv,
    maxBuffer: 1 << 24,
  });
  installLog = `${installed.stdout}${installed.stderr}`;
}, 180_000);

// Removing the installed tree is a few hundred MB of unlinks: on a loaded machine it ran past the default 30 s.
afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true });
}, 120_000);

describe("the packed package", () => {
  it("installs from its tarball, in a clean folder with no registry, on this Node with no engine or tree warning", () => {
    expect(installLog).not.toMatch(/EBADENGINE|Unsupported engine/);
    // ERESOLVE and the like would mean a tree other than the one npm resolved; a deprecation notice would not.
    expect(installLog.split("\n").filter((line) => /^npm warn (?!deprecated )/i.test(line))).toEqual([]);
  });

  it("puts in node_modules only packages that accept every Node version of engines, each boundary of its range too", () => {
    // Only this Node runs the install here; the other boundaries are held by the engines the installed packages
    // declare.
    const declared = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { engines: { node: string } })
      .engines.node;
    const boundaries = [...declared.matchAll(/(\d+\.\d+\.\d+)/g)].map((m) => m[1] as string);
    expect(boundaries).toEqual(["20.19.0", "22.13.0", "24.0.0"]);
    const tree = JSON.parse(readFileSync(join(project, "package-lock.json"), "utf8")) as {
      packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>;
    };
    const wants = Object.entries(tree.packages).flatMap(([path, entry]) => {
      const node = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      return node === undefined ? [] : [{ name: `${path}@${String(entry.version)}`, node }];
    });
    expect(wants.length).toBeGreaterThan(10);
    const refused = wants.filter(
      (w) =>
        !semver.subset(declared, w.node) || ![...boundaries, process.version].every((v) => semver.satisfies(v, w.node)),
    );
    expect(refused.map((w) => `${w.name} wants node ${w.node}`)).toEqual([]);
  });

  it("holds what users run and read, and none of the sources, tests or fixtures of the harness itself", () => {
    expect(files).toEqual(
      expect.arrayContaining([
        "bin/example-conformance.js",
        "dist/harness/index.js",
        "dist/harness/index.d.ts",
        "dist/harness/cli/main.js",
        "dist/common/message.js",
        "dist/common/paths.js",
        "proto/example/example.proto",
        "proto/buf.yaml",
        "README.md",
      ]),
    );
    const stray = files.filter((f) =>
      /^(test|common|harness|suites|reference-server|fixtures\/(?!golden\/))\/|^dist\/(test|fixtures)\/|\.test\.|\.map$|\.ts$(?<!\.d\.ts)/.test(
        f,
      ),
    );
    expect(stray).toEqual([]);
    // The GitHub Action's bundle is the Action's, run from a checkout of the repository: not the package's.
    expect(files.filter((f) => f.startsWith("action-dist/"))).toEqual([]);
    // The README's reference pages travel with it, so its links hold in node_modules too.
    const pages = [...readFileSync(join(ROOT, "README.md"), "utf8").matchAll(/\]\((docs\/[\w-]+\.md)[)#]/g)].map(
      (m) => m[1] as string,
    );
    expect(pages.length).toBeGreaterThan(10);
    expect(pages.filter((p) => !files.includes(p))).toEqual([]);
  });

  it("is what `npm publish --dry-run` would publish, file for file", async () => {
    // Dry run: nothing leaves the machine. npm still asks the (dead) registry about the version: no retries, no wait.
    const env = { ...npmEnv, npm_config_fetch_retries: "0" };
    const published = await run(
      "npm",
      ["publish", "--dry-run", "--ignore-scripts", "--json", "--registry", NO_REGISTRY],
      { cwd: ROOT, env, maxBuffer: 1 << 24 },
    );
    // npm 11 keys the result by the package's name.
    const parsed = JSON.parse(published.stdout) as Record<string, { files: { path: string }[] }>;
    const info = Object.values(parsed)[0];
    expect(info?.files.map((f) => f.path).sort()).toEqual([...files].sort());
  }, 60_000);

  it("installed with no registry, runs `npx example-conformance check` against its built-in reference server", async () => {
    const check = await run("npx", ["--offline", "example-conformance", "check", "--runs", "5", "--seed", "1"], {
      cwd: project,
      env: npmEnv,
      maxBuffer: 1 << 24,
    });
    expect(check.stdout).toMatch(/conformant: no gating check failed \(seed 1\)/);
  }, 120_000);

  it("runs `npx example-conformance lint`, which names GO_PACKAGE_DEFINED in text on a contract without go_package", async () => {
    const contract = join(project, "contract", "example");
    mkdirSync(contract, { recursive: true });
    const proto = readFileSync(join(ROOT, "proto", "example", "example.proto"), "utf8").replace(
      /^option go_package = .*\n/m,
      "",
    );
    writeFileSync(join(contract, "example.proto"), proto);
    const lint = await run("npx", ["--offline", "example-conformance", "lint", "contract"], {
      cwd: project,
      env: npmEnv,
    }).then(
      () => ({ code: 0, stdout: "" }),
      (err: { code: number; stdout: string }) => err,
    );
    expect(lint.code).toBe(1);
    expect(lint.stdout).toMatch(/example\/example\.proto:\d+:\d+:\[GO_PACKAGE_DEFINED\] /);
  }, 60_000);

  it("type-checks a program that uses the API, and the API starts the reference server and runs a check without " +
    "writing a line", async () => {
    writeFileSync(
      join(project, "use.ts"),
      [
        "import { startReferenceServer, runConformance, catalogue, createGrpcTarget, type RunReport } from " +
          '"example-conformance";',
        "const server = await startReferenceServer({ grpcPort: 0, httpPort: 0 });",
        "const target = createGrpcTarget({ address: server.grpcAddress });",
        "const ids: string[] = catalogue.map((c) => c.id);",
        "const summary = (r: RunReport): number => r.exitCode;",
        "const report = await runConformance({ grpc: { address: server.grpcAddress }, only: " +
          '["grpc.stateless.history-independent"], seed: 1, runs: 5 });',
        "console.log(ids.length > 0, summary(report), report.verdict, typeof target);",
        "await server.close();",
        "",
      ].join("\n"),
    );
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: false,
          outDir: "out",
          typeRoots: [join(ROOT, "node_modules", "@types")],
          types: ["node"],
          skipLibCheck: true,
        },
        files: ["use.ts"],
      }),
    );
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    await run(process.execPath, [tsc, "-p", "."], { cwd: project });
    // Wrong use is caught: the declarations are real, not `any`.
    writeFileSync(
      join(project, "wrong.ts"),
      'import { startReferenceServer } from "example-conformance";\nawait startReferenceServer({ grpcPort: ' +
        '"nine" });\n',
    );
    const wrong = await run(
      process.execPath,
      [
        tsc,
        "--noEmit",
        "--module",
        "NodeNext",
        "--moduleResolution",
        "NodeNext",
        "--target",
        "ES2022",
        "--typeRoots",
        join(ROOT, "node_modules", "@types"),
        "--types",
        "node",
        "--skipLibCheck",
        "wrong.ts",
      ],
      { cwd: project },
    ).then(
      () => "",
      (err: { stdout: string }) => err.stdout,
    );
    expect(wrong).toMatch(/wrong\.ts.*error TS2322/);
    const used = await run(process.execPath, [join(project, "out", "use.js")], { cwd: project });
    expect(used.stdout).toBe("true 0 partial object\n");
    expect(used.stderr).toBe("");
  }, 120_000);

  it("compiles every example of docs/api.md, whose table names every export", async () => {
    const section = readFileSync(join(ROOT, "docs", "api.md"), "utf8");
    const blocks = [...section.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1] as string);
    expect(blocks.length).toBeGreaterThanOrEqual(3);
    const names = blocks.map((code, i) => {
      const name = `readme-${i}.ts`;
      writeFileSync(join(project, name), code);
      return name;
    });
    writeFileSync(
      join(project, "tsconfig.readme.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: true,
          typeRoots: [join(ROOT, "node_modules", "@types")],
          types: ["node"],
          skipLibCheck: true,
        },
        files: names,
      }),
    );
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const compiled = await run(process.execPath, [tsc, "-p", "tsconfig.readme.json"], { cwd: project }).then(
      () => "",
      (err: { stdout: string }) => err.stdout,
    );
    expect(compiled).toBe("");
    // Every name the package exports, from its declarations, is in the table.
    const dts = readFileSync(
      join(project, "node_modules", "example-conformance", "dist", "harness", "index.d.ts"),
      "utf8",
    );
    const exported = [
      ...[...dts.matchAll(/^export (?:type )?\{([^}]*)\}/gm)].flatMap((m) =>
        (m[1] as string).split(",").map(
          (n) =>
            n
              .trim()
              .split(/\s+as\s+/)
              .pop() ?? "",
        ),
      ),
      ...[...dts.matchAll(/^export declare (?:function|const|class) (\w+)/gm)].map((m) => m[1] as string),
    ].filter((n) => n !== "");
    const table = section.slice(0, section.indexOf("```ts"));
    expect(exported.length).toBeGreaterThan(40);
    expect(exported.filter((n) => !new RegExp(`\\b${n}\\b`).test(table))).toEqual([]);
  }, 120_000);
});
