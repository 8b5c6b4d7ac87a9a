// Whether a recorded request is valid for its protocol and valid proto3: what a legal server may refuse a request
// for. Each problem is one line; an empty list is a valid request.
import { decodeMessage } from "../../contract/message.js";
import { parseFrames } from "../protocols/grpc-web/index.js";
import { inflate, isIdentity } from "../targets/inflate.js";
import { HELLO_PATH } from "./recording-servers.js";
import { headerValue, MAX_RECORDED_BODY_BYTES, type RecordedRequest } from "./recorded-request.js";

/** gRPC's Timeout: at most 8 digits and a unit (PROTOCOL-HTTP2.md). */
const GRPC_TIMEOUT = /^\d{1,8}[HMSmun]$/;
/** Connect's Timeout: at most 10 digits, milliseconds. */
const CONNECT_TIMEOUT = /^\d{1,10}$/;
const RPC_CONTENT_TYPES = /^application\/(grpc|grpc-web|grpc-web-text|proto|json|connect\+\w+)\b/;

async function messageProblems(data: Uint8Array, encoding: string | undefined, compressed: boolean): Promise<string[]> {
  let bytes = data;
  if (compressed) {
    const inflated = await inflate(data, encoding as string, MAX_RECORDED_BODY_BYTES);
    if (!inflated.ok) return [`its message does not decompress with ${encoding}: ${inflated.message}`];
    bytes = inflated.bytes;
  }
  const decoded = decodeMessage(bytes);
  return decoded.ok ? [] : [`its message is not a valid proto3 Message: ${decoded.reason}`];
}

/** gRPC's and gRPC-Web's body: exactly one length-prefixed message, compressed only with an encoding named. */
async function framedProblems(body: Uint8Array, encoding: string | undefined): Promise<string[]> {
  const { frames, leftover } = parseFrames(body);
  if (leftover !== 0) return [`its body is not whole length-prefixed messages (${leftover} bytes left over after ${frames.length})`];
  if (frames.length !== 1) return [`a unary call carries exactly one message; it carries ${frames.length}`];
  const f = frames[0] as { flags: number; data: Uint8Array };
  if (f.flags > 1) return [`its message's flags byte is ${f.flags}: only 0 (plain) or 1 (compressed) are defined`];
  if (f.flags === 1 && isIdentity(encoding)) return ["its message's compressed flag is set, yet it names no grpc-encoding"];
  return messageProblems(f.data, encoding, f.flags === 1);
}

async function grpcProblems(r: RecordedRequest): Promise<string[]> {
  const problems: string[] = [];
  const contentType = headerValue(r, "content-type") ?? "";
  if (!/^application\/grpc(\+proto)?\s*(;|$)/i.test(contentType)) problems.push(`content-type ${JSON.stringify(contentType)} is not application/grpc or application/grpc+proto`);
  const timeout = headerValue(r, "grpc-timeout");
  if (timeout !== undefined && !GRPC_TIMEOUT.test(timeout)) problems.push(`grpc-timeout ${JSON.stringify(timeout)} is not 1-8 digits and a unit (H, M, S, m, u, n)`);
  return [...problems, ...(await framedProblems(r.body, headerValue(r, "grpc-encoding")))];
}

async function grpcWebProblems(r: RecordedRequest): Promise<string[]> {
  const contentType = headerValue(r, "content-type") ?? "";
  const text = /^application\/grpc-web-text/i.test(contentType);
  if (!/^application\/grpc-web(-text)?(\+proto)?\s*(;|$)/i.test(contentType)) return [`content-type ${JSON.stringify(contentType)} is not gRPC-Web's with the proto codec`];
  const body = text ? Buffer.from(Buffer.from(r.body).toString("latin1"), "base64") : r.body;
  const timeout = headerValue(r, "grpc-timeout");
  const problems = timeout !== undefined && !GRPC_TIMEOUT.test(timeout) ? [`grpc-timeout ${JSON.stringify(timeout)} is not 1-8 digits and a unit`] : [];
  return [...problems, ...(await framedProblems(body, headerValue(r, "grpc-encoding")))];
}

function jsonProblems(bytes: Uint8Array): string[] {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes).toString("utf8"));
  } catch {
    return ["its JSON body does not parse"];
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return ["its JSON body is not an object, as proto3's JSON mapping of a message is"];
  const body = (value as Record<string, unknown>).body;
  return body === undefined || body === null || typeof body === "string" ? [] : [`its JSON member body is ${typeof body}, not a string`];
}

async function connectProblems(r: RecordedRequest): Promise<string[]> {
  if (r.method !== "POST") return [`Hello is not declared free of side effects, so Connect calls it with POST, not ${r.method}`];
  const contentType = (headerValue(r, "content-type") ?? "").toLowerCase();
  const codec = /^application\/proto\s*(;|$)/.test(contentType) ? "proto" : /^application\/json\s*(;|$)/.test(contentType) ? "json" : undefined;
  if (codec === undefined) return [`content-type ${JSON.stringify(contentType)} is not a Connect unary one (application/proto or application/json)`];
  const timeout = headerValue(r, "connect-timeout-ms");
  const problems = timeout !== undefined && !CONNECT_TIMEOUT.test(timeout) ? [`connect-timeout-ms ${JSON.stringify(timeout)} is not 1-10 digits`] : [];
  const encoding = headerValue(r, "content-encoding");
  let bytes = r.body;
  if (!isIdentity(encoding)) {
    const inflated = await inflate(r.body, encoding as string, MAX_RECORDED_BODY_BYTES);
    if (!inflated.ok) return [...problems, `its body does not decompress with content-encoding ${encoding}: ${inflated.message}`];
    bytes = inflated.bytes;
  }
  if (codec === "json") return [...problems, ...jsonProblems(bytes)];
  const decoded = decodeMessage(bytes);
  return decoded.ok ? problems : [...problems, `its body is not a valid proto3 Message: ${decoded.reason}`];
}

/** A resource request: a GET or HEAD carries no payload (part 4.2 rule 11); one the reference server refused as malformed. */
function resourceProblems(r: RecordedRequest): string[] {
  const problems: string[] = [];
  if ((r.method === "GET" || r.method === "HEAD") && r.body.length > 0) problems.push(`a ${r.method} request carries no payload (part 4.2 rule 11); it carries ${r.body.length} bytes`);
  const contentType = headerValue(r, "content-type") ?? "";
  if (r.method === "POST" && RPC_CONTENT_TYPES.test(contentType) && r.answer === "404") problems.push(`an RPC to a path no procedure is at (the contract's Hello is ${HELLO_PATH})`);
  else if (["400", "405", "411", "415", "422"].includes(r.answer)) problems.push(`a legal server (the reference's HTTP interface) refused it as wrong: HTTP ${r.answer} (part 7: 4xx, the client's request was wrong)`);
  return problems;
}

export async function requestProblems(r: RecordedRequest): Promise<string[]> {
  if (r.truncated) return [`its body is longer than the recording bound (${MAX_RECORDED_BODY_BYTES} bytes) for a one-field Message`];
  switch (r.protocol) {
    case "grpc":
      if (r.path !== HELLO_PATH || r.method !== "POST") return [`no procedure at ${r.method} ${r.path} (the contract's Hello is POST ${HELLO_PATH})`];
      return grpcProblems(r);
    case "grpc-web":
      return grpcWebProblems(r);
    case "connect":
      return connectProblems(r);
    case "http":
      return resourceProblems(r);
  }
}
