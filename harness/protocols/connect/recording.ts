// check-client's side of the Connect protocol: a call of Hello on the recording servers' HTTP port that no other
// protocol there claims is read as Connect's, and is valid as a unary POST with the proto or JSON codec, a
// well-formed connect-timeout-ms and a body that is the Message.
import type { ServerResponse } from "node:http";
import { decodeMessage } from "../../../common/message.js";
import { CODE, encodeReply, encodeReplyJson } from "../../client-check/scenarios.js";
import { inflate, isIdentity } from "../../targets/inflate.js";
import type { HelloAsk, RecordedCall, RecordingSide } from "../protocol.js";
import { CONNECT_CODES } from "./codec.js";

/** A recorded header's first value. */
const firstValue = (call: RecordedCall, name: string): string | undefined => call.headers[name]?.[0];

/** Connect's Timeout: at most 10 digits, milliseconds. */
const CONNECT_TIMEOUT = /^\d{1,10}$/;

function jsonProblems(bytes: Uint8Array): string[] {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes).toString("utf8"));
  } catch {
    return ["its JSON body does not parse"];
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return ["its JSON body is not an object, as proto3's JSON mapping of a message is"];
  const body = (value as Record<string, unknown>).body;
  return body === undefined || body === null || typeof body === "string"
    ? []
    : [`its JSON member body is ${typeof body}, not a string`];
}

async function connectProblems(call: RecordedCall, maxBytes: number): Promise<string[]> {
  if (call.method !== "POST")
    return [`Hello is not declared free of side effects, so Connect calls it with POST, not ${call.method}`];
  const contentType = (firstValue(call, "content-type") ?? "").toLowerCase();
  const codec = /^application\/proto\s*(;|$)/.test(contentType)
    ? "proto"
    : /^application\/json\s*(;|$)/.test(contentType)
      ? "json"
      : undefined;
  if (codec === undefined)
    return [
      `content-type ${JSON.stringify(contentType)} is not a Connect unary one (application/proto or application/json)`,
    ];
  const timeout = firstValue(call, "connect-timeout-ms");
  const problems =
    timeout !== undefined && !CONNECT_TIMEOUT.test(timeout)
      ? [`connect-timeout-ms ${JSON.stringify(timeout)} is not 1-10 digits`]
      : [];
  const encoding = firstValue(call, "content-encoding");
  let bytes = call.body;
  if (!isIdentity(encoding)) {
    const inflated = await inflate(call.body, encoding as string, maxBytes);
    if (!inflated.ok)
      return [...problems, `its body does not decompress with content-encoding ${encoding}: ${inflated.message}`];
    bytes = inflated.bytes;
  }
  if (codec === "json") return [...problems, ...jsonProblems(bytes)];
  const decoded = decodeMessage(bytes);
  return decoded.ok ? problems : [...problems, `its body is not a valid proto3 Message: ${decoded.reason}`];
}

const CONNECT_NAMES: Readonly<Record<number, string>> = Object.fromEntries(
  Object.entries(CONNECT_CODES).map(([name, code]) => [code, name]),
);
/** The HTTP status of each Connect error code (the protocol's table). */
const CONNECT_HTTP_STATUS: Readonly<Record<string, number>> = {
  canceled: 499,
  unknown: 500,
  invalid_argument: 400,
  deadline_exceeded: 504,
  not_found: 404,
  already_exists: 409,
  permission_denied: 403,
  resource_exhausted: 429,
  failed_precondition: 400,
  aborted: 409,
  out_of_range: 400,
  unimplemented: 501,
  internal: 500,
  unavailable: 503,
  data_loss: 500,
  unauthenticated: 401,
};

function protoBody(data: Uint8Array): string | undefined {
  const decoded = decodeMessage(data);
  return decoded.ok ? decoded.message.body : undefined;
}

/** proto3's JSON mapping of Message: an object whose body, when present, is a string (or null, the default). */
function jsonBody(data: Uint8Array): string | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(data).toString("utf8"));
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
    const body = (value as Record<string, unknown>).body;
    return body === undefined || body === null ? "" : typeof body === "string" ? body : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Connect's unary answer: the reply in the call's codec, or its error as JSON under the code's HTTP status; 415 for
 * another codec.
 */
async function answerConnect(call: RecordedCall, res: ServerResponse, ask: HelloAsk): Promise<void> {
  const contentType = (firstValue(call, "content-type") ?? "").toLowerCase();
  const codec = /^application\/proto\s*(;|$)/.test(contentType)
    ? "proto"
    : /^application\/json\s*(;|$)/.test(contentType)
      ? "json"
      : undefined;
  const error = (code: number, message: string) => {
    const name = CONNECT_NAMES[code] ?? "unknown";
    ask.said(`${ask.statusName(code)} (HTTP ${CONNECT_HTTP_STATUS[name] ?? 500})`);
    if (!res.headersSent)
      res
        .writeHead(CONNECT_HTTP_STATUS[name] ?? 500, { "content-type": "application/json" })
        .end(JSON.stringify({ code: name, message }));
  };
  if (codec === undefined) {
    ask.said("415");
    res.writeHead(415, { "accept-post": "application/proto, application/json" }).end();
    return;
  }
  const encoding = firstValue(call, "content-encoding");
  let data = call.body;
  if (!isIdentity(encoding)) {
    const inflated = await inflate(call.body, encoding as string, ask.maxBodyBytes);
    if (!inflated.ok)
      return error(
        inflated.reason === "unknown-encoding" ? CODE.UNIMPLEMENTED : CODE.INVALID_ARGUMENT,
        inflated.message,
      );
    data = inflated.bytes;
  }
  const answer = await ask.answer(codec, codec === "proto" ? protoBody(data) : jsonBody(data));
  if (answer === undefined) return;
  if (answer.kind === "error") return error(answer.code, answer.message);
  if (res.headersSent) return;
  res
    .writeHead(200, { "content-type": codec === "proto" ? "application/proto" : "application/json" })
    .end(codec === "proto" ? encodeReply(answer) : encodeReplyJson(answer));
}

export const connectRecording: RecordingSide = {
  title: "Connect",
  port: "http1",
  contentTypes: "rest",
  deadlineHeader: "connect-timeout-ms",
  problems: connectProblems,
  answerHttp1: answerConnect,
};
