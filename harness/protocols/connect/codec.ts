// The Connect protocol's unary wire rules (connectrpc.com/docs/protocol): its error codes and how a reply reads.
import { Status, type UnaryResult } from "../rpc.js";
import type { PlainResponse } from "../http-exchange.js";
import { codeForHttpStatus, failed, inflatedBody } from "../http-rpc.js";

/** Connect's error codes (its protocol document), by the gRPC code each stands for. */
export const CONNECT_CODES: Readonly<Record<string, number>> = {
  canceled: Status.CANCELLED,
  unknown: Status.UNKNOWN,
  invalid_argument: Status.INVALID_ARGUMENT,
  deadline_exceeded: Status.DEADLINE_EXCEEDED,
  not_found: Status.NOT_FOUND,
  already_exists: Status.ALREADY_EXISTS,
  permission_denied: Status.PERMISSION_DENIED,
  resource_exhausted: Status.RESOURCE_EXHAUSTED,
  failed_precondition: Status.FAILED_PRECONDITION,
  aborted: Status.ABORTED,
  out_of_range: Status.OUT_OF_RANGE,
  unimplemented: Status.UNIMPLEMENTED,
  internal: Status.INTERNAL,
  unavailable: Status.UNAVAILABLE,
  data_loss: Status.DATA_LOSS,
  unauthenticated: Status.UNAUTHENTICATED,
};

/**
 * The code and message of a JSON error body; the HTTP status's code when the body is no such error. The protocol
 * says an error's Content-Type must be application/json and a client must infer the code from the HTTP status when
 * the error body is missing or malformed: a reply of another type (a proxy's page) is not read as an error body.
 */
function errorOf(res: PlainResponse): { code: number; details: string } {
  let code = codeForHttpStatus(res.status as number);
  let details = `HTTP ${res.status}`;
  if (!(res.headers["content-type"]?.[0] ?? "").startsWith("application/json")) return { code, details };
  try {
    const error = JSON.parse(Buffer.from(res.body).toString("utf8")) as unknown;
    if (typeof error === "object" && error !== null) {
      const c = (error as { code?: unknown }).code;
      const m = (error as { message?: unknown }).message;
      if (typeof c === "string" && c in CONNECT_CODES) code = CONNECT_CODES[c] as number;
      if (typeof m === "string") details = m;
    }
  } catch {
    // Not JSON after all: the HTTP status stands.
  }
  return { code, details };
}

/** Connect unary: 200 carries the message; any other status carries a JSON error; trailers are trailer- headers. */
export function fromConnect(res: PlainResponse, deadline: number): UnaryResult {
  const early = failed(res, deadline);
  if (early) return early;
  const headers: Record<string, string[]> = {};
  const trailers: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(res.headers)) {
    if (k.startsWith("trailer-")) trailers[k.slice("trailer-".length)] = v;
    else headers[k] = v;
  }
  if (res.status === 200) return { code: Status.OK, details: "", response: res.body, headers, trailers };
  return { ...errorOf(res), headers, trailers };
}

/** A Connect unary reply as check and load alike read it: its body's Content-Encoding undone, then fromConnect. */
export async function readConnectReply(res: PlainResponse, deadline: number): Promise<UnaryResult> {
  return fromConnect(await inflatedBody(res, res.headers["content-encoding"]?.[0]), deadline);
}
