// connect.error.http-status: an error's HTTP status is the one the Connect protocol maps its code to (gRPC-Web: of its
// class).
import { encodeMessage } from "../../common/message.js";
import { fail, pass, skip, type CheckDefinition } from "../../harness/check.js";
import { CONNECT_CODES } from "../../harness/protocols/connect/index.js";
import { frame, parseFrames, parseTrailerBlock } from "../../harness/protocols/grpc-web/index.js";
import type { PlainRequest, PlainResponse } from "../../harness/protocols/index.js";
import { MALFORMED } from "../grpc/errors-malformed-request.js";
import { target } from "../grpc/_internals/calls.js";
import { describe, exchange, header, mediaType } from "../rpc/_internals/exchange.js";
import { GRPC_WEB } from "../../harness/protocols/grpc-web/index.js";
import { CONNECT } from "../../harness/protocols/connect/index.js";

/**
 * The Connect protocol's table from code to HTTP status (connectrpc.com/docs/protocol, "Error Codes"). canceled was
 * 408 before the protocol moved it to 499: both are accepted.
 */
export const CONNECT_HTTP_STATUS: Readonly<Record<string, readonly number[]>> = {
  canceled: [499, 408],
  unknown: [500],
  invalid_argument: [400],
  deadline_exceeded: [504],
  not_found: [404],
  already_exists: [409],
  permission_denied: [403],
  resource_exhausted: [429],
  failed_precondition: [400],
  aborted: [409],
  out_of_range: [400],
  unimplemented: [501],
  internal: [500],
  unavailable: [503],
  data_loss: [500],
  unauthenticated: [401],
};

const CLASS_WORDS: Record<number, string> = { 4: "the client's mistake (4xx)", 5: "the server's error (5xx)" };
const classOf = (status: number) => Math.floor(status / 100);
const NAME_OF_CODE = new Map(Object.entries(CONNECT_CODES).map(([name, code]) => [code, name]));

/**
 * Past the receive limit gRPC and Connect libraries keep by default (4 MiB): a server that keeps it answers
 * resource_exhausted, one that takes more answers the call, which judges nothing.
 */
const PAST_DEFAULT_LIMIT = 4 * 1024 * 1024 + 1;

/**
 * Requests every server answers with an error (messages that do not parse, a method the service lacks, an unknown
 * compression), and one most answer with resource_exhausted (a message past the default limit).
 */
function provocations(protocol: string): { what: string; req: PlainRequest }[] {
  const connect = protocol === CONNECT;
  const headers: Record<string, string> = connect
    ? { "content-type": "application/proto", "connect-protocol-version": "1" }
    : { "content-type": "application/grpc-web+proto", "x-grpc-web": "1" };
  const wrap = (bytes: Uint8Array) => (connect ? bytes : frame(0, bytes));
  return [
    ...MALFORMED.slice(0, 2).map((m) => ({
      what: `a malformed request (${m.what})`,
      req: { headers, body: wrap(new Uint8Array(m.bytes)) },
    })),
    {
      what: "a call of a method the service lacks",
      req: { path: "/example.exampleService/NoSuchMethod", headers, body: wrap(new Uint8Array()) },
    },
    {
      what: "a request in a compression nobody serves",
      req: connect
        ? { headers: { ...headers, "content-encoding": "x-conformance-unknown" }, body: new Uint8Array([1, 2, 3]) }
        : {
            headers: { ...headers, "grpc-encoding": "x-conformance-unknown" },
            body: frame(1, new Uint8Array([1, 2, 3])),
          },
    },
    {
      what: `a message of ${PAST_DEFAULT_LIMIT} bytes, past the default 4 MiB limit`,
      req: { headers, body: wrap(encodeMessage("x".repeat(PAST_DEFAULT_LIMIT))) },
    },
  ];
}

/** A gRPC-Web answer's body read for its trailer frame, at most this many bytes: an error's body is a few dozen. */
const MAX_ERROR_BODY = 64 * 1024;

/**
 * The grpc-status of a gRPC-Web answer: in its headers (a trailers-only answer) or in the trailer frame of its body.
 */
function grpcWebStatus(res: PlainResponse): string | undefined {
  const inHeaders = header(res, "grpc-status");
  if (inHeaders !== undefined || res.body.length > MAX_ERROR_BODY) return inHeaders;
  const trailer = parseFrames(res.body).frames.find((f) => (f.flags & 0x80) !== 0);
  return trailer ? parseTrailerBlock(trailer.data)["grpc-status"]?.[0] : undefined;
}

/** The code an error answer names: Connect's JSON code, or gRPC-Web's grpc-status (headers or trailer frame). */
function codeNamed(protocol: string, res: PlainResponse): string | undefined {
  if (protocol === CONNECT) {
    if (mediaType(res) !== "application/json" || res.body.length > 64 * 1024) return undefined;
    try {
      const code = (JSON.parse(Buffer.from(res.body).toString("utf8")) as { code?: unknown } | null)?.code;
      return typeof code === "string" && code in CONNECT_CODES ? code : undefined;
    } catch {
      return undefined;
    }
  }
  const raw = grpcWebStatus(res);
  return raw !== undefined && /^\d{1,2}$/.test(raw) ? NAME_OF_CODE.get(Number(raw)) : undefined;
}

export const connectErrorHttpStatus: CheckDefinition = {
  id: "connect.error.http-status",
  title:
    "a Connect error's HTTP status is the one its code maps to (4xx for the client's mistake, 5xx for the " +
    "server's); a gRPC-Web error not sent as 200 has a status of its code's class",
  severity: "MUST",
  area: "grpc",
  profile: "protocol",
  spec:
    "§7 (4xx: the client's request was wrong; 5xx: a server-side error), Connect protocol (Error Codes: HTTP " +
    "status per code)",
  protocols: [CONNECT, GRPC_WEB],
  async run(ctx) {
    const protocol = target(ctx).protocol;
    const judged: string[] = [];
    const problems: string[] = [];
    let seen = 0;
    let seenAs200 = 0;
    for (const { what, req } of provocations(protocol)) {
      const res = await exchange(ctx, req);
      if (res.failure) continue;
      seen++;
      if (res.status === 200) {
        seenAs200++;
        continue;
      }
      const code = codeNamed(protocol, res);
      // An answer naming no code (a router's plain 404, a 415) is no RPC error: the shape checks judge it.
      if (code === undefined) continue;
      const allowed = CONNECT_HTTP_STATUS[code] as readonly number[];
      const status = res.status as number;
      const right = protocol === CONNECT ? allowed.includes(status) : classOf(status) === classOf(allowed[0] as number);
      const expected =
        protocol === CONNECT ? `HTTP ${allowed.join(" or ")}` : `a ${classOf(allowed[0] as number)}xx status`;
      if (right) judged.push(`${code} → ${status}`);
      else {
        const classWrong = classOf(status) !== classOf(allowed[0] as number);
        problems.push(
          `${what} got code ` +
            `${code}${classWrong ? `, ${CLASS_WORDS[classOf(allowed[0] as number)] ?? "its class"},` : ""} with ` +
            `${describe(res)}, not ${expected}`,
        );
      }
    }
    if (problems.length > 0)
      return fail(`${problems[0]}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ""}`, {
        details: problems,
      });
    if (judged.length === 0) {
      // gRPC-Web sends its errors as 200 with the status in the trailers, as the protocol allows: the rule holds.
      if (protocol !== CONNECT)
        return pass(
          `${seenAs200} of ${seen} gRPC-Web error(s) provoked came as HTTP 200 with their status in the ` +
            `trailers, which the protocol allows${seenAs200 < seen ? "; the others named no code" : ""}`,
        );
      return skip("no request answered with a Connect error (a JSON code): no status to judge");
    }
    return pass(`every error's HTTP status fits its code: ${[...new Set(judged)].join(", ")}`);
  },
};
