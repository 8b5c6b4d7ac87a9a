// Where the package's own files are, wherever it is installed and whether it runs from dist/ or from source.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

function findPackageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json")) || !existsSync(join(dir, "proto"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error("example-conformance: cannot find the package root");
    dir = parent;
  }
  return dir;
}

export const PACKAGE_ROOT = findPackageRoot();
export const CONTRACT_DIR = join(PACKAGE_ROOT, "proto");
export const CONTRACT_FILE = join(CONTRACT_DIR, "example", "example.proto");
export const BUF_CONFIG = join(CONTRACT_DIR, "buf.yaml");
