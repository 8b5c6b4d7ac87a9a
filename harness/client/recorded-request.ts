// What a client under test sent to the recording servers, as data: each request bounded in bytes, and rendered for a
// report with the run's API key as a placeholder (the reporters neutralise the rest).
import { API_KEY_PLACEHOLDER } from "../targets/http-curl.js";

/** The protocol a request was spoken in, as the recording server read it. */
export type RecordedProtocol = "grpc" | "connect" | "grpc-web" | "http";

export interface RecordedRequest {
  /** 1-based, in the order the servers received them within the scenario. */
  n: number;
  /** Milliseconds since the scenario's servers started. */
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

export const headerValue = (r: Pick<RecordedRequest, "headers">, name: string): string | undefined => r.headers[name]?.[0];

export const isHello = (r: RecordedRequest): boolean => r.helloIndex !== undefined;

const PROTOCOL_NAMES: Readonly<Record<RecordedProtocol, string>> = { grpc: "gRPC", connect: "Connect", "grpc-web": "gRPC-Web", http: "HTTP" };

/** A secret, everywhere it appears, as the placeholder the replay lines use. */
export function redactor(secret: string | undefined): (text: string) => string {
  if (secret === undefined || secret === "") return (t) => t;
  return (t) => t.split(secret).join(API_KEY_PLACEHOLDER);
}

/** "request #2 (gRPC POST /example.exampleService/Hello, answered UNAVAILABLE)": how a failure names the request. */
export function requestName(r: RecordedRequest, redact: (t: string) => string): string {
  return `request #${r.n} (${PROTOCOL_NAMES[r.protocol]} ${r.method} ${redact(r.path)} at ${r.atMs} ms, answered ${r.answer})`;
}

/** The request as lines for a failure's details: its name, its headers (the key redacted), its body's size. */
export function describeRequest(r: RecordedRequest, redact: (t: string) => string): string[] {
  const headers = Object.entries(r.headers).flatMap(([k, vs]) => vs.map((v) => `  ${k}: ${redact(v).slice(0, SHOWN_HEADER_CHARS)}`));
  const body = `  body: ${r.body.length} bytes${r.truncated ? " (cut: longer than the recording bound)" : ""}${r.body.length > 0 ? `, first bytes ${Buffer.from(r.body.subarray(0, 24)).toString("hex")}` : ""}`;
  return [requestName(r, redact), ...headers, body];
}
