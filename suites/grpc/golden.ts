// The fixture checks: one check per golden case in fixtures/golden/grpc, with the ID the file gives or
// grpc.golden.<file name>. Each file is validated when it is loaded: a case that does not say exactly what it
// means (a misspelt status name, an unknown field) is a load error, never a check that passes on anything.
import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { PACKAGE_ROOT } from "../../contract/paths.js";
import { fail, pass, type CheckDefinition, type Profile, type Severity } from "../../harness/check.js";
import { PROTOCOL_NAMES } from "../../harness/protocols/index.js";
import { droppedBeforeAnswer, Status, statusText, type UnaryResult } from "../../harness/targets/grpc-target.js";
import { asReply, hello, show, target } from "./_internals/calls.js";
import { compareReplies } from "./_internals/variation.js";
import { describeRaw, rawStatus } from "./_internals/raw.js";

export const GOLDEN_DIR = join(PACKAGE_ROOT, "fixtures", "golden", "grpc");

/** One length-prefixed frame as sent: the flag byte, a length (which may lie) and the payload. */
export interface GoldenFrame {
  /** The payload in hex. */
  hex: string;
  /** The compressed flag (bit 0); default false. */
  compressed?: boolean;
  /** The length the prefix announces; default the payload's own. A different one is a lying length. */
  length?: number;
}

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
  request: {
    /** The request message in hex (one frame, uncompressed); leave out when frames are given. */
    hex?: string;
    path?: string;
    /** HTTP/2 request headers to send instead of the defaults (null removes one): gRPC's wire only. */
    headers?: Record<string, string | null>;
    /** The body as frames, each with its flag and length: gRPC's wire only. */
    frames?: GoldenFrame[];
  };
  expect: { outcome: "ok" } | { outcome: "status"; status: string | string[] } | { outcome: "same-as"; hex: string };
}

const STATUS_NAMES = [...Object.keys(Status), "not-ok"];
const HEX = /^(?:[0-9a-fA-F]{2}|\s)*$/;

const bytes = (hexText: string) => new Uint8Array(Buffer.from(hexText.replace(/\s+/g, ""), "hex"));

/** Checks one parsed file against the format; the first problem found is thrown, naming the file. */
export function validateGoldenCase(file: string, raw: unknown): GoldenCase {
  const bad = (why: string): never => {
    throw new Error(`${file}: ${why}`);
  };
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
  const onlyKeys = (o: Record<string, unknown>, keys: string[], where: string) => {
    for (const k of Object.keys(o)) if (!keys.includes(k)) bad(`${where} has an unknown field ${JSON.stringify(k)} (known: ${keys.join(", ")})`);
  };
  const hexField = (v: unknown, where: string): string => {
    if (typeof v !== "string" || !HEX.test(v)) bad(`${where} must be hex bytes, such as "0a 01 61"`);
    return v as string;
  };
  if (!isObject(raw)) return bad("a case is a JSON object");
  onlyKeys(raw, ["id", "description", "severity", "profile", "spec", "protocols", "request", "expect"], "the case");
  const { id, description, severity, profile, spec, protocols, request, expect } = raw;
  if (id !== undefined && (typeof id !== "string" || !/^grpc\.[a-z0-9-]+(\.[a-z0-9-]+)*$/.test(id))) bad(`id ${JSON.stringify(id)} is not a grpc.* check ID`);
  for (const [k, v] of [["description", description], ["spec", spec]] as const) if (typeof v !== "string" || v === "") bad(`${k} must be a non-empty string`);
  if (severity !== "MUST" && severity !== "SHOULD") bad(`severity must be MUST or SHOULD, not ${JSON.stringify(severity)}`);
  if (profile !== "contract" && profile !== "protocol") bad(`profile must be contract or protocol, not ${JSON.stringify(profile)}`);
  if (!isObject(request)) return bad("request must be an object");
  onlyKeys(request, ["hex", "path", "headers", "frames"], "request");
  if (request.hex !== undefined) hexField(request.hex, "request.hex");
  if (request.path !== undefined && (typeof request.path !== "string" || !request.path.startsWith("/"))) bad("request.path must start with /");
  if ((request.hex === undefined) === (request.frames === undefined)) bad("request needs exactly one of hex and frames");
  if (request.headers !== undefined) {
    if (!isObject(request.headers)) bad("request.headers must be an object of name: value (or null to leave one out)");
    for (const [k, v] of Object.entries(request.headers as Record<string, unknown>)) if (v !== null && typeof v !== "string") bad(`request.headers.${k} must be a string or null`);
  }
  if (request.frames !== undefined) {
    if (!Array.isArray(request.frames)) bad("request.frames must be an array");
    (request.frames as unknown[]).forEach((f, i) => {
      if (!isObject(f)) bad(`request.frames[${i}] must be an object`);
      const frame = f as Record<string, unknown>;
      onlyKeys(frame, ["hex", "compressed", "length"], `request.frames[${i}]`);
      hexField(frame.hex, `request.frames[${i}].hex`);
      if (frame.compressed !== undefined && typeof frame.compressed !== "boolean") bad(`request.frames[${i}].compressed must be true or false`);
      if (frame.length !== undefined && (!Number.isInteger(frame.length) || (frame.length as number) < 0 || (frame.length as number) > 0xffffffff)) {
        bad(`request.frames[${i}].length must be a whole number of bytes below 2^32`);
      }
    });
  }
  if (protocols !== undefined) {
    if (!Array.isArray(protocols) || protocols.length === 0) bad(`protocols must be a non-empty list of protocol names (${PROTOCOL_NAMES.join(", ")})`);
    for (const p of protocols as unknown[]) if (typeof p !== "string" || !(PROTOCOL_NAMES as readonly string[]).includes(p)) bad(`protocols: ${JSON.stringify(p)} is not a protocol (${PROTOCOL_NAMES.join(", ")})`);
    const onWire = request.frames !== undefined || request.headers !== undefined;
    if (onWire && (protocols as string[]).some((p) => p !== "grpc")) bad("protocols: frames and headers built by hand are gRPC's wire, so the case applies to grpc alone");
  }
  if (!isObject(expect)) return bad("expect must be an object");
  if (expect.outcome === "ok") onlyKeys(expect, ["outcome"], "expect");
  else if (expect.outcome === "same-as") {
    onlyKeys(expect, ["outcome", "hex"], "expect");
    hexField(expect.hex, "expect.hex");
  } else if (expect.outcome === "status") {
    onlyKeys(expect, ["outcome", "status"], "expect");
    const names = Array.isArray(expect.status) ? expect.status : [expect.status];
    if (names.length === 0) bad("expect.status names no status");
    for (const n of names) if (typeof n !== "string" || !STATUS_NAMES.includes(n)) bad(`expect.status ${JSON.stringify(n)} is not a gRPC status name (${STATUS_NAMES.join(", ")})`);
  } else bad(`expect.outcome must be ok, status or same-as, not ${JSON.stringify(expect.outcome)}`);
  return { name: basename(file, ".json"), ...(raw as Omit<GoldenCase, "name">) };
}

export function loadGoldenCases(dir = GOLDEN_DIR): GoldenCase[] {
  const cases = readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(readFileSync(join(dir, f), "utf8"));
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

const goldenId = (c: GoldenCase): string => c.id ?? `grpc.golden.${c.name}`;

/** The body as given: frames length-prefixed here (a lying length kept as it lies), or one frame of the hex. */
function bodyOf(c: GoldenCase): Uint8Array {
  const frames = c.request.frames ?? [{ hex: c.request.hex ?? "" }];
  return Buffer.concat(
    frames.map((f) => {
      const payload = bytes(f.hex);
      const prefix = Buffer.alloc(5);
      prefix[0] = f.compressed ? 1 : 0;
      prefix.writeUInt32BE(f.length ?? payload.length, 1);
      return Buffer.concat([prefix, payload]);
    }),
  );
}

/** Whether the status came from the server, not from the client for want of an answer. */
const answered = (r: UnaryResult): boolean => r.code !== Status.DEADLINE_EXCEEDED && !droppedBeforeAnswer(r);

export function goldenCheck(c: GoldenCase): CheckDefinition {
  const onWire = c.request.frames !== undefined || c.request.headers !== undefined;
  const wanted = c.expect.outcome === "status" ? (Array.isArray(c.expect.status) ? c.expect.status : [c.expect.status]) : [];
  const matches = (code: number) => wanted.some((w) => (w === "not-ok" ? code !== Status.OK : code === Status[w as keyof typeof Status]));
  return {
    id: goldenId(c),
    title: c.description,
    severity: c.severity,
    area: "grpc",
    profile: c.profile,
    spec: c.spec,
    // Frames and headers built by hand are gRPC's wire; a message alone goes over any protocol unless the case narrows it.
    ...(c.protocols !== undefined ? { protocols: c.protocols } : onWire && { protocols: ["grpc"] as const }),
    async run(ctx) {
      const t = target(ctx);
      const details = [`request: ${c.request.hex !== undefined ? `bytes ${c.request.hex || "(none)"}` : `frames ${JSON.stringify(c.request.frames)}`}${c.request.path ? ` to ${c.request.path}` : ""}`];
      const expect = c.expect;
      if (expect.outcome === "status" || onWire) {
        const want = expect.outcome === "status" ? wanted.join(" or ") : "OK";
        if (t.protocol === "grpc") {
          // On the wire, so that a status the client made up (a refused connection) never counts as the server's.
          const res = await t.raw({ ...(c.request.path && { path: c.request.path }), ...(c.request.headers && { headers: c.request.headers }), body: bodyOf(c) });
          const code = rawStatus(res);
          if (code === undefined) return fail(`no grpc-status from the server: ${describeRaw(res)}`, { details });
          const ok = expect.outcome === "status" ? matches(code) : code === Status.OK;
          return ok ? pass(describeRaw(res)) : fail(`got ${describeRaw(res)}, expected ${want}`, { details });
        }
        const result = await hello(ctx, bytes(c.request.hex ?? ""), c.request.path ? { path: c.request.path } : {});
        if (!answered(result)) return fail(`no answer: ${statusText(result.code, result.details)}`, { details });
        return matches(result.code) ? pass(statusText(result.code, result.details)) : fail(`got ${statusText(result.code, result.details)}, expected ${want}`, { details });
      }
      const result = await hello(ctx, bytes(c.request.hex ?? ""), c.request.path ? { path: c.request.path } : {});
      const reply = asReply(result);
      if (!reply.ok) return fail(reply.reason, { details });
      if (expect.outcome === "ok") return pass(`OK, reply ${show(reply.message.body)}`);
      const other = asReply(await hello(ctx, bytes(expect.hex)));
      if (!other.ok) return fail(`the comparison request (${expect.hex || "no bytes"}) was not served: ${other.reason}`);
      const same = await compareReplies(ctx, reply.message.body, other.message.body);
      if (same.verdict === "same") return pass(`same reply ${show(reply.message.body)}${same.note}`);
      if (same.verdict === "not-compared") return pass(`served; ${same.note}`);
      return fail(`got ${show(reply.message.body)}, but ${expect.hex || "no bytes"} got ${show(other.message.body)}`, { details });
    },
  };
}
