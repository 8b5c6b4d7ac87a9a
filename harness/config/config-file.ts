// example-conformance.yaml: what an implementation declares about itself and how it is checked, read once and
// validated against a JSON Schema (ajv); every error names the file, the line and the key.
import { readFileSync } from "node:fs";
import { Ajv, type ErrorObject } from "ajv";
import { isMap, isScalar, isSeq, type Document } from "yaml";
import { CLAIM_VALUES, type Claims } from "../claims.js";
import { ConformanceError } from "../errors.js";
import { protocolModules } from "../protocols/index.js";
import { parseConfigYaml } from "./bounded-yaml.js";

/** The file `check` reads when --config is not given and the file is in the working directory. */
export { DEFAULT_CONFIG_FILE } from "./default-file.js";

/** Files past this are no configuration: refused before parsing (and within it, bounded-yaml.ts bounds the work). */
const MAX_CONFIG_BYTES = 1 << 20;

export interface Implementation {
  name: string;
  version?: string;
  url?: string;
}

export interface ConfigExpectedFailure {
  check: string;
  reason: string;
  /** YYYY-MM-DD: from that day on the entry no longer waives, and the run fails. */
  expires?: string;
  /** The line of the entry in the file. */
  line: number;
}

/**
 * The file's targets: one key for each protocol of the map (a registered protocol's too), named as the protocol is
 * (grpc, connect, grpc-web), the same target as its flag names; the HTTP target and the replicas beside them.
 */
export type ConfigTargets = { http?: string; replicas?: string[]; "http-replicas"?: string[] } & {
  readonly [protocol: string]: string | string[] | undefined;
};

export interface ConformanceConfig {
  /** The file it was read from. */
  file: string;
  implementation?: Implementation;
  targets?: ConfigTargets;
  /** Environment variable names, never values. */
  credentials?: { "api-key-env"?: string; "api-key-in"?: string; "metadata-env"?: string[] };
  claims?: Claims;
  "expected-failures"?: ConfigExpectedFailure[];
  profile?: "contract" | "protocol";
  strict?: boolean;
  only?: string[];
  skip?: string[];
  /** `load`'s thresholds (`p99<20ms,errors<0.1%`); --slo overrides them. */
  load?: { slo?: string };
}

const text = { type: "string", minLength: 1, maxLength: 2048 } as const;
const texts = { type: "array", items: text, maxItems: 256 } as const;
const envName = { type: "string", pattern: "^[A-Za-z_][A-Za-z0-9_]*$", maxLength: 256 } as const;

/**
 * The schema of the file, its targets' keys read from the protocol map as it stands (registered protocols too): unknown
 * keys are refused, so a misspelt key cannot be silently ignored.
 */
const schemaFor = (protocols: readonly string[]) => ({
  type: "object",
  additionalProperties: false,
  properties: {
    implementation: {
      type: "object",
      additionalProperties: false,
      required: ["name"],
      properties: { name: text, version: text, url: text },
    },
    targets: {
      type: "object",
      additionalProperties: false,
      properties: {
        ...Object.fromEntries(protocols.map((name) => [name, text])),
        http: text,
        replicas: texts,
        "http-replicas": texts,
      },
    },
    credentials: {
      type: "object",
      additionalProperties: false,
      properties: {
        "api-key-env": envName,
        "api-key-in": text,
        "metadata-env": { type: "array", items: envName, maxItems: 64 },
      },
    },
    claims: {
      type: "object",
      additionalProperties: false,
      properties: Object.fromEntries(Object.entries(CLAIM_VALUES).map(([k, values]) => [k, { enum: [...values] }])),
    },
    "expected-failures": {
      type: "array",
      maxItems: 1024,
      items: {
        type: "object",
        additionalProperties: false,
        required: ["check", "reason"],
        properties: { check: text, reason: text, expires: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}$" } },
      },
    },
    profile: { enum: ["contract", "protocol"] },
    strict: { type: "boolean" },
    only: texts,
    skip: texts,
    load: { type: "object", additionalProperties: false, properties: { slo: text } },
  },
});

const ajv = new Ajv({ allErrors: false, strict: true });
/** The validator of each set of protocols met, compiled once (a test that registers one compiles a second). */
const validators = new Map<string, ReturnType<typeof ajv.compile>>();

function validatorFor(protocols: readonly string[]): ReturnType<typeof ajv.compile> {
  const key = protocols.join("\n");
  let validate = validators.get(key);
  if (validate === undefined) {
    validate = ajv.compile(schemaFor(protocols));
    validators.set(key, validate);
  }
  return validate;
}

/** Reads and validates a configuration file; every problem is a config error (exit 2) naming the line and the key. */
export function loadConfigFile(file: string): ConformanceConfig {
  let raw: Buffer;
  try {
    raw = readFileSync(file);
  } catch (err) {
    throw new ConformanceError(
      "config",
      `--config ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? "error"})`,
    );
  }
  if (raw.length > MAX_CONFIG_BYTES)
    throw new ConformanceError(
      "config",
      `--config ${file}: ${raw.length} bytes, more than a configuration needs (at most ${MAX_CONFIG_BYTES})`,
    );
  const parsed = parseConfigYaml(raw.toString("utf8"), file);
  const { doc, at } = parsed;
  const value: unknown = parsed.value ?? {};
  const validate = validatorFor(protocolModules().map((m) => m.name));
  if (!validate(value)) throw new ConformanceError("config", describe(file, doc, at, validate.errors?.[0]));
  const config = value as Omit<ConformanceConfig, "file" | "expected-failures"> & {
    "expected-failures"?: Omit<ConfigExpectedFailure, "line">[];
  };
  const failures = config["expected-failures"]?.map((e, i) => {
    const line = at(nodeAt(doc, ["expected-failures", i])?.range?.[0]);
    if (e.expires !== undefined && Number.isNaN(Date.parse(`${e.expires}T00:00:00Z`))) {
      throw new ConformanceError(
        "config",
        `${file}:${line}: expected-failures[${i}].expires: ${e.expires} is not a date (YYYY-MM-DD)`,
      );
    }
    return { ...e, line };
  });
  const { "expected-failures": _listed, ...rest } = config;
  return { ...rest, ...(failures && { "expected-failures": failures }), file };
}

/** The node at a path of keys and indexes, for its position. */
function nodeAt(doc: Document, path: (string | number)[]): { range?: [number, number, number] | null } | undefined {
  const node = doc.getIn(path, true);
  return isMap(node) || isSeq(node) || isScalar(node) ? node : undefined;
}

/** One line for ajv's first error: file, line, the key as a dotted path, and what is wrong. */
function describe(
  file: string,
  doc: Document,
  at: (offset: number | undefined) => number,
  error: ErrorObject | undefined | null,
): string {
  if (!error) return `${file}: not a valid configuration`;
  const path = error.instancePath
    .split("/")
    .slice(1)
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p.replace(/~1/g, "/").replace(/~0/g, "~")));
  const extra =
    error.keyword === "additionalProperties"
      ? String((error.params as { additionalProperty: string }).additionalProperty)
      : undefined;
  const keyPath = extra !== undefined ? [...path, extra] : path;
  // An unknown key is found by its own node's key; anything else by its value's node.
  let offset = nodeAt(doc, path)?.range?.[0];
  if (extra !== undefined) {
    const parent = doc.getIn(path, true);
    const pair = isMap(parent) ? parent.items.find((p) => isScalar(p.key) && p.key.value === extra) : undefined;
    if (pair && isScalar(pair.key)) offset = pair.key.range?.[0];
  }
  const name =
    keyPath.reduce<string>((s, p) => (typeof p === "number" ? `${s}[${p}]` : s === "" ? p : `${s}.${p}`), "") ||
    "(the document)";
  const why =
    error.keyword === "additionalProperties"
      ? "is not a key of the configuration (see docs/configuration.md)"
      : error.keyword === "enum"
        ? `must be one of ` +
          `${((error.params as { allowedValues: unknown[] }).allowedValues ?? []).map(String).join(", ")}`
        : (error.message ?? "is not valid");
  return `${file}:${at(offset)}: ${name}: ${why}`;
}
