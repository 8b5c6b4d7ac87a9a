// The metadata a run sends on every call, from --metadata pairs, --metadata-from-env variables and --metadata-file
// files. A value is never repeated in an error, as it is often a credential.
import { readFileSync } from "node:fs";
import { ConformanceError } from "../errors.js";

/** key=value pairs, checked for what gRPC allows in a key. `source` names where a pair came from. */
export function parseMetadata(
  pairs: readonly string[],
  source = (pair: string) => `--metadata ${pair.slice(0, Math.max(0, pair.indexOf("=")))}=...`,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq <= 0)
      throw new ConformanceError(
        "usage",
        `${pair.includes("=") ? source(pair) : `--metadata ${pair}`}: expected key=value`,
      );
    const key = pair.slice(0, eq).trim().toLowerCase();
    if (!/^[0-9a-z_.-]+$/.test(key) || key.startsWith("grpc-")) {
      throw new ConformanceError("usage", `${source(pair)}: ${JSON.stringify(key)} is not a custom metadata key`);
    }
    out[key] = pair.slice(eq + 1);
  }
  return out;
}

/** key=value lines (blank lines and # comments ignored), as an environment variable or a file holds them. */
function metadataLines(text: string, where: string): Record<string, string> {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
  const out: Record<string, string> = {};
  lines.forEach((line, i) =>
    Object.assign(
      out,
      parseMetadata([line], () => `${where}: line ${i + 1}`),
    ),
  );
  return out;
}

export interface MetadataSources {
  metadata: readonly string[];
  metadataFromEnv: readonly string[];
  metadataFile: readonly string[];
}

/** Every metadata pair of the run: --metadata, then --metadata-from-env variables, then --metadata-file files. */
export function collectMetadata(
  opts: MetadataSources,
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const out = parseMetadata(opts.metadata);
  for (const name of opts.metadataFromEnv) {
    const text = env[name];
    if (text === undefined || text === "")
      throw new ConformanceError("usage", `--metadata-from-env ${name}: the environment variable is not set`);
    Object.assign(out, metadataLines(text, `--metadata-from-env ${name}`));
  }
  for (const file of opts.metadataFile) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      throw new ConformanceError(
        "usage",
        `--metadata-file ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
      );
    }
    Object.assign(out, metadataLines(text, `--metadata-file ${file}`));
  }
  return out;
}
