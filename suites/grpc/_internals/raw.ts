// Reading hand-built exchanges: the grpc-status a raw response carries, and a one-line account of it.
import { grpcStatusOfHttp, isGrpcReply, statusText, type RawResponse } from "../../../harness/protocols/rpc.js";
import { neutralise } from "../../../harness/_internals/neutralise.js";

/** grpc-status from the trailers (or the single header block of a trailers-only response); undefined when absent. */
export function rawStatus(res: RawResponse): number | undefined {
  const values = res.trailers["grpc-status"] ?? (res.trailersOnly ? undefined : res.headers["grpc-status"]);
  if (values?.length !== 1) return undefined;
  const n = Number(values[0]);
  return Number.isInteger(n) && n >= 0 ? n : undefined;
}

export function describeRaw(res: RawResponse): string {
  if (res.failure?.kind === "timeout") return "no complete answer before the time bound";
  if (res.failure?.kind === "connection") return `connection failed: ${res.failure.message}`;
  const parts: string[] = [];
  if (res.httpStatus !== undefined && rawStatus(res) === undefined && !isGrpcReply(res.httpStatus, res.headers)) {
    const type = res.headers["content-type"]?.[0];
    const said = type === undefined ? "no content type" : `content-type ${neutralise(type.slice(0, 64))}`;
    return (
      `HTTP ${res.httpStatus} with ${said}: not a gRPC reply (a proxy's error page?), which gRPC clients read as ` +
      `${statusText(grpcStatusOfHttp(res.httpStatus))}`
    );
  }
  if (res.httpStatus !== undefined) parts.push(`HTTP ${res.httpStatus}`);
  const status = rawStatus(res);
  const message = res.trailers["grpc-message"]?.[0];
  if (status !== undefined)
    parts.push(`grpc-status ${statusText(status, message ? decodeURIComponentSafe(message) : "")}`);
  else if (res.httpStatus !== undefined) parts.push("no grpc-status");
  parts.push(`${res.frames.length} message(s)`);
  if (res.failure?.kind === "reset") parts.push(`stream reset (HTTP/2 code ${res.failure.http2Code})`);
  if (res.failure?.kind === "goaway") parts.push(`GOAWAY (HTTP/2 code ${res.failure.http2Code})`);
  return parts.join(", ");
}

export function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The curl-free way to reproduce a wire-level exchange: what was sent, in words. */
export function sentLine(what: string): string {
  return `sent: ${what}`;
}
