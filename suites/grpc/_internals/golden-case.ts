// The golden case format: one fixed request to Hello and the outcomes it allows, read from fixtures/golden/grpc and
// validated on load against a JSON Schema (golden-case-schema.ts); a bad case stops the load with one line naming the
// file and the key.
import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { ErrorObject } from "ajv";
import { PACKAGE_ROOT } from "../../../common/paths.js";
import type { Profile, Severity } from "../../../harness/check.js";
import { PROTOCOL_NAMES } from "../../../harness/protocols/index.js";
import { GRPC } from "../../../harness/protocols/grpc/index.js";
import { goldenCaseValidator } from "./golden-case-validator.js";

export const GOLDEN_DIR = join(PACKAGE_ROOT, "fixtures", "golden", "grpc");

/** Files past this are no case: refused before parsing. */
const MAX_CASE_BYTES = 64 * 1024;

/** One length-prefixed frame as sent: the flag byte, a length (which may lie) and the payload. */
export interface GoldenFrame {
  /** The payload in hex. */
  hex: string;
  /** The compressed flag (bit 0); default false. */
  compressed?: boolean;
  /** The length the prefix announces; default the payload's own. A different one is a lying length. */
  length?: number;
}

/**
 * One outcome a case allows: a status (by name, or not-ok for any but OK), OK with a Message, or the same reply as
 * other bytes get.
 */
export type GoldenOutcome = { status: string } | { reply: "any" } | { sameAs: string };

export interface GoldenCase {
  name: string;
  /** The check's ID; default grpc.golden.<file name>. Lets a check that existed before keep its ID. */
  id?: string;
  description: string;
  severity: Severity;
  profile: Profile;
  spec: string;
  /**
   * The protocols the case applies to (names of PROTOCOLS); default every one for a message alone, gRPC for frames
   * or headers built by hand (gRPC's wire). Over another protocol the check skips, saying so.
   */
  protocols?: string[];
  /** How messages name the request ("an unknown grpc-encoding got ..."); default the path, or "the request". */
  subject?: string;
  /** Over gRPC, where a status is read: from the wire (default) or as the client reports it. */
  statusFrom?: "wire" | "client";
  request: {
    /** The request message in hex (one frame, uncompressed); leave out when frames are given. */
    hex?: string;
    path?: string;
    /** HTTP/2 request headers to send instead of the defaults (null removes one): gRPC's wire only. */
    headers?: Record<string, string | null>;
    /** The body as frames, each with its flag and length: gRPC's wire only. */
    frames?: GoldenFrame[];
  };
  expect: { anyOf: GoldenOutcome[] };
}

/**
 * The format's validator: the build's standalone code for the schema (no ajv loaded, nothing compiled at start-up),
 * or ajv compiling it when the build's code is absent or was generated from another schema.
 */
const validate = await goldenCaseValidator();

/** One line for ajv's first error: where, and what was wanted. */
function describeError(e: ErrorObject): string {
  const where =
    e.instancePath === ""
      ? "the case"
      : e.instancePath
          .slice(1)
          .replace(/\//g, ".")
          .replace(/\.(\d+)(?=\.|$)/g, "[$1]");
  const p = e.params as Record<string, unknown>;
  if (e.keyword === "additionalProperties")
    return `${where} has an unknown field ${JSON.stringify(p.additionalProperty)}`;
  if (e.keyword === "required") return `${where} needs ${JSON.stringify(p.missingProperty)}`;
  if (e.keyword === "enum") return `${where} must be one of ${(p.allowedValues as unknown[]).join(", ")}`;
  if (e.keyword === "pattern" && where.endsWith("hex")) return `${where} must be hex bytes, such as "0a 01 61"`;
  return `${where} ${e.message ?? "is not valid"}`;
}

/** The outcomes a case allows that are a reply (OK with one Message, or the same as other bytes). */
export const replyOutcomes = (c: GoldenCase): GoldenOutcome[] => c.expect.anyOf.filter((o) => !("status" in o));
/** The status names a case allows. */
export const statusOutcomes = (c: GoldenCase): string[] =>
  c.expect.anyOf.flatMap((o) => ("status" in o ? [o.status] : []));
/** Whether the request is built by hand on gRPC's wire (frames or headers). */
export const onWire = (c: GoldenCase): boolean => c.request.frames !== undefined || c.request.headers !== undefined;

/** Checks one parsed file against the format; the first problem found is thrown, naming the file. */
export function validateGoldenCase(file: string, raw: unknown): GoldenCase {
  const bad = (why: string): never => {
    throw new Error(`${file}: ${why}`);
  };
  // Spelt out before the schema, so that a misspelt protocol is named with the list it is not in.
  const listed = (raw as { protocols?: unknown } | null)?.protocols;
  if (Array.isArray(listed)) {
    if (listed.length === 0) bad(`protocols must be a non-empty list of protocol names (${PROTOCOL_NAMES.join(", ")})`);
    for (const p of listed)
      if (!(PROTOCOL_NAMES as readonly unknown[]).includes(p))
        bad(`protocols: ${JSON.stringify(p)} is not a protocol (${PROTOCOL_NAMES.join(", ")})`);
  }
  if (!validate(raw)) return bad(describeError(validate.errors![0]!));
  const c = { name: basename(file, ".json"), ...(raw as Omit<GoldenCase, "name">) };
  if ((c.request.hex === undefined) === (c.request.frames === undefined))
    bad("request needs exactly one of hex and frames");
  if (onWire(c) && c.protocols?.some((p) => p !== GRPC))
    bad("protocols: frames and headers built by hand are gRPC's wire, so the case applies to grpc alone");
  if (replyOutcomes(c).length > 1) bad("expect.anyOf allows at most one reply outcome (reply or sameAs)");
  if (onWire(c) && c.expect.anyOf.some((o) => "sameAs" in o))
    bad("expect.anyOf: sameAs compares Messages, not a body built by hand on gRPC's wire");
  return c;
}

export function loadGoldenCases(dir = GOLDEN_DIR): GoldenCase[] {
  const cases = readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => {
      const textOf = readFileSync(join(dir, f));
      if (textOf.length > MAX_CASE_BYTES)
        throw new Error(`${f}: ${textOf.length} bytes; a case is at most ${MAX_CASE_BYTES}`);
      let parsed: unknown;
      try {
        parsed = JSON.parse(textOf.toString("utf8"));
      } catch (err) {
        throw new Error(`${f}: not JSON (${err instanceof Error ? err.message : String(err)})`);
      }
      return validateGoldenCase(f, parsed);
    });
  const ids = cases.map(goldenId);
  const twice = ids.find((id, i) => ids.indexOf(id) !== i);
  if (twice !== undefined) throw new Error(`two golden cases have the ID ${twice}`);
  return cases;
}

export const goldenId = (c: GoldenCase): string => c.id ?? `grpc.golden.${c.name}`;
