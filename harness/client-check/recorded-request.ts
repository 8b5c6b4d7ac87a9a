// What a client under test sent to the recording servers, as data: each request bounded in bytes, and rendered for a
// report with the run's API key as a placeholder (the reporters neutralise the rest).
import { protocolModule } from "../protocols/index.js";
import { API_KEY_PLACEHOLDER } from "../targets/http-curl.js";

/** What a request to the resources is recorded as: the HTTP interface's, no RPC protocol's. */
export const RESOURCES = "http";

/** The protocol a request was spoken in, as the recording server read it: a protocol module's name, or RESOURCES. */
export type RecordedProtocol = string;

export interface RecordedRequest {
  /** 1-based, in the order the servers received them within the scenario. */
  n: number;
  /** When its headers arrived, in milliseconds since the scenario's servers started. */
  atMs: number;
  protocol: RecordedProtocol;
  method: string;
  /** The path and query as sent (the key, when it is a query value, is redacted when rendered). */
  path: string;
  /** Header names lowercased, pseudo-headers left out; at most MAX_HEADER_VALUES values in all. */
  headers: Record<string, string[]>;
  /** The body as received, at most MAX_RECORDED_BODY_BYTES. */
  body: Uint8Array;
  /** Whether the body was longer than what was kept (the server answered it as too large). */
  truncated: boolean;
  /** For a Hello call: the Hello calls of the scenario before it (0 for the first). */
  helloIndex?: number;
  /** For a Hello call the scenario answered: when its answer was written, as atMs counts. */
  answeredAtMs?: number;
  /** What the recording server answered, in words: "OK", "UNAVAILABLE", "401", "held 3000 ms, then OK". */
  answer: string;
}

/** A request body past this is not kept: the server stops reading and answers it as too large. */
export const MAX_RECORDED_BODY_BYTES = 64 * 1024;
/** Requests a scenario records; past it the servers still answer, and count what they did not keep. */
export const MAX_RECORDED_REQUESTS = 200;
/** Header values kept per request. */
export const MAX_HEADER_VALUES = 64;
const SHOWN_HEADER_CHARS = 120;

export const headerValue = (r: Pick<RecordedRequest, "headers">, name: string): string | undefined =>
  r.headers[name]?.[0];

export const isHello = (r: RecordedRequest): boolean => r.helloIndex !== undefined;

/** The protocol's name as a report writes it: its module's title; "HTTP" for the resources. */
const titleOf = (protocol: RecordedProtocol): string => protocolModule(protocol)?.recording?.title ?? "HTTP";

/** The forms a secret takes in a request: as typed, percent- and form-encoded (a path), JSON-escaped (a body). */
function secretForms(secret: string): string[] {
  const percent = encodeURIComponent(secret);
  return [...new Set([secret, percent, percent.replace(/%20/g, "+"), JSON.stringify(secret).slice(1, -1)])].sort(
    (a, b) => b.length - a.length,
  );
}

/** A secret, everywhere it appears (in any of its forms), as the placeholder the replay lines use. */
export function redactor(secret: string | undefined): (text: string) => string {
  if (secret === undefined || secret === "") return (t) => t;
  const forms = secretForms(secret);
  return (t) => forms.reduce((text, form) => text.split(form).join(API_KEY_PLACEHOLDER), t);
}

/** "request #2 (gRPC POST /example.exampleService/Hello, answered UNAVAILABLE)": how a failure names the request. */
export function requestName(r: RecordedRequest, redact: (t: string) => string): string {
  return `request #${r.n} (${titleOf(r.protocol)} ${r.method} ${redact(r.path)} at ${r.atMs} ms, answered ${r.answer})`;
}

/** Bytes of a body shown in hex in a failure's details. */
const SHOWN_BODY_BYTES = 24;

/**
 * Whether the body's bytes are an encoding of the message (compressed, or gRPC-Web's base64 text), not the message
 * itself.
 */
function bodyEncoded(r: RecordedRequest): boolean {
  const contentType = (headerValue(r, "content-type") ?? "").toLowerCase();
  const named = (name: string) => {
    const v = headerValue(r, name);
    return v !== undefined && v.trim() !== "" && v.trim().toLowerCase() !== "identity";
  };
  return contentType.startsWith("application/grpc-web-text") || named("content-encoding") || named("grpc-encoding");
}

/** Every occurrence of `secret`'s bytes, in any of its forms, replaced by the placeholder's. */
function withoutSecret(bytes: Uint8Array, secret: string): Buffer {
  const placeholder = Buffer.from(API_KEY_PLACEHOLDER, "latin1");
  let whole = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (const form of secretForms(secret)) {
    const needle = Buffer.from(form, "utf8");
    const parts: Buffer[] = [];
    let from = 0;
    for (let at = whole.indexOf(needle, from); at >= 0; at = whole.indexOf(needle, from)) {
      parts.push(whole.subarray(from, at), placeholder);
      from = at + needle.length;
    }
    parts.push(whole.subarray(from));
    whole = Buffer.concat(parts);
  }
  return whole;
}

/**
 * The body's first bytes in hex, for a failure's details. With a key in the run its bytes are replaced by the
 * placeholder's before the cut (so no part of it is shown either), and a body whose bytes encode the message
 * (compressed, base64) is not shown at all: the key could be in it in a form no redaction recognises.
 */
export function bodyPreview(r: RecordedRequest, secret?: string): string {
  if (r.body.length === 0) return "";
  if (secret === undefined || secret === "")
    return `, first bytes ${Buffer.from(r.body.subarray(0, SHOWN_BODY_BYTES)).toString("hex")}`;
  if (bodyEncoded(r))
    return ", its bytes not shown (they are encoded, and could carry the API key where no redaction sees it)";
  return (
    `, first bytes ${withoutSecret(r.body, secret).subarray(0, SHOWN_BODY_BYTES).toString("hex")} (the API key's ` +
    `bytes, if any, replaced by ${API_KEY_PLACEHOLDER}'s)`
  );
}

/** A header value as shown: a -bin entry decoded when that shows the key (so it is redacted), else as sent. */
function shownHeader(name: string, value: string, redact: (t: string) => string, secret: string | undefined): string {
  if (secret !== undefined && secret !== "" && name.endsWith("-bin")) {
    const decoded = Buffer.from(value, "base64").toString("utf8");
    if (decoded.includes(secret)) return `(base64-decoded) ${redact(decoded)}`;
  }
  return redact(value);
}

/** The request as lines for a failure's details: its name, its headers (the key redacted), its body's size. */
export function describeRequest(r: RecordedRequest, redact: (t: string) => string, secret?: string): string[] {
  const headers = Object.entries(r.headers).flatMap(([k, vs]) =>
    vs.map((v) => `  ${k}: ${shownHeader(k, v, redact, secret).slice(0, SHOWN_HEADER_CHARS)}`),
  );
  const body =
    `  body: ${r.body.length} ` +
    `bytes${r.truncated ? " (cut: longer than the recording bound)" : ""}${bodyPreview(r, secret)}`;
  return [requestName(r, redact), ...headers, body];
}
