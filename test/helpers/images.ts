// Builds the images the container tests start, with no registry: FROM scratch, with this machine's node binary and
// the shared libraries it links, the product's compiled code and its production dependencies. Tagged by a hash
// of what went in, so a second run reuses the image.
import { execFile, execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  cpSync,
  type Dirent,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { promisify } from "node:util";
import { PACKAGE_ROOT } from "../../contract/paths.js";

const run = promisify(execFile);
/** Label on every test image and container, so a test can find what it left behind. */
export const TEST_LABEL = "org.example-conformance.test";

/** Whether a Docker engine answers here: undefined when it does, else why not. */
export async function dockerMissing(): Promise<string | undefined> {
  try {
    await run("docker", ["info", "--format", "{{.ServerVersion}}"], { timeout: 10_000 });
    return undefined;
  } catch (err) {
    return `no Docker engine (docker info: ${err instanceof Error ? err.message.split("\n")[0] : String(err)})`;
  }
}

/** The production dependencies' folders, less the buf binaries nothing in a container runs. */
function productionModules(): string[] {
  const out = execFileSync("npm", ["ls", "--omit=dev", "--all", "--parseable"], {
    cwd: PACKAGE_ROOT,
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
  });
  return out
    .split("\n")
    .filter((p) => p.startsWith(join(PACKAGE_ROOT, "node_modules")))
    .filter((p) => !/@bufbuild[/\\]buf(-[a-z0-9-]+)?$/.test(p));
}

/** node and every library it links, at their own paths. */
function nodeFiles(): string[] {
  const ldd = execFileSync("ldd", [process.execPath], { encoding: "utf8" });
  const libs = [...ldd.matchAll(/(?:=>\s*)?(\/\S+)\s+\(0x/g)].map((m) => m[1] as string);
  return [process.execPath, ...libs];
}

/**
 * An image whose entrypoint is `node <script> ...args`, the script a path inside the package. It runs as a user
 * without privileges, and has no shell: only what the product needs.
 */
export async function buildImage(name: string, script: string, args: readonly string[]): Promise<string> {
  const modules = productionModules();
  const hash = createHash("sha256");
  hash.update(`${name}\n${script}\n${args.join("\0")}\n${process.version}\n`);
  hash.update(readFileSync(join(PACKAGE_ROOT, "package-lock.json")));
  for (const part of ["dist", "bin", "proto", "fixtures/golden"]) {
    const files = (readdirSync(join(PACKAGE_ROOT, part), { recursive: true, withFileTypes: true }) as Dirent[])
      .filter((d) => d.isFile())
      .map((d) => join(d.parentPath ?? d.path, d.name))
      .sort();
    for (const f of files) hash.update(relative(PACKAGE_ROOT, f)).update(readFileSync(f));
  }
  const tag = `example-conformance-test/${name}:${hash.digest("hex").slice(0, 16)}`;
  try {
    await run("docker", ["image", "inspect", tag], { timeout: 10_000 });
    return tag;
  } catch {
    // Not built yet.
  }
  const ctx = mkdtempSync(join(tmpdir(), "image-"));
  try {
    const root = join(ctx, "rootfs");
    for (const file of nodeFiles()) {
      const to = join(root, file === process.execPath ? "/usr/local/bin/node" : file);
      mkdirSync(dirname(to), { recursive: true });
      copyFileSync(file, to);
      chmodSync(to, 0o755);
    }
    mkdirSync(join(root, "etc"), { recursive: true });
    writeFileSync(
      join(root, "etc", "passwd"),
      "root:x:0:0:root:/:/nonexistent\napp:x:10001:10001:app:/app:/nonexistent\n",
    );
    writeFileSync(join(root, "etc", "group"), "root:x:0:\napp:x:10001:\n");
    mkdirSync(join(root, "tmp"), { recursive: true });
    chmodSync(join(root, "tmp"), 0o1777);
    const app = join(root, "app");
    for (const part of ["package.json", "bin", "dist", "proto", "fixtures/golden"])
      cpSync(join(PACKAGE_ROOT, part), join(app, part), { recursive: true, dereference: true });
    for (const dir of modules)
      cpSync(dir, join(app, relative(PACKAGE_ROOT, dir)), { recursive: true, dereference: true });
    const entry = JSON.stringify(["/usr/local/bin/node", `/app/${script}`, ...args]);
    writeFileSync(
      join(ctx, "Dockerfile"),
      `FROM scratch\nCOPY rootfs/ /\nUSER 10001:10001\nWORKDIR /app\nLABEL ${TEST_LABEL}=1\nENTRYPOINT ${entry}\n`,
    );
    await run("docker", ["build", "-q", "-t", tag, ctx], { timeout: 300_000, maxBuffer: 16 * 1024 * 1024 });
    return tag;
  } finally {
    rmSync(ctx, { recursive: true, force: true });
  }
}
