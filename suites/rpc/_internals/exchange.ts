// What the Connect and gRPC-Web wire checks share: one plain exchange with the target, and how to describe it.
import type { CheckContext } from "../../../harness/check.js";
import { frame } from "../../../harness/protocols/grpc-web/index.js";
import type { PlainRequest, PlainResponse } from "../../../harness/protocols/rpc.js";
import { target } from "../../grpc/_internals/calls.js";

/** One plain HTTP exchange with the RPC target (counted against the run's budget). */
export function exchange(ctx: CheckContext, request: PlainRequest): Promise<PlainResponse> {
  const t = target(ctx);
  if (!t.exchange) throw new Error(`the target is spoken to in ${t.protocol}, which has no plain HTTP exchange`);
  return t.exchange(request);
}

export const header = (res: PlainResponse, name: string): string | undefined => res.headers[name]?.[0];

/**
 * One line for a response, for messages: status, content type and size, or how it failed. Text of the target's goes
 * through JSON.stringify, never raw.
 */
export function describe(res: PlainResponse): string {
  if (res.failure)
    return res.failure.kind === "connection"
      ? `no answer (${JSON.stringify(res.failure.message)})`
      : `no answer (${res.failure.kind})`;
  return (
    `HTTP ${res.status}, content-type ${JSON.stringify(header(res, "content-type") ?? null)}, ${res.body.length} ` +
    `body bytes`
  );
}

/** A Connect unary POST of these message bytes, in binary. */
export const connectPost = (ctx: CheckContext, message: Uint8Array): Promise<PlainResponse> =>
  exchange(ctx, { headers: { "content-type": "application/proto", "connect-protocol-version": "1" }, body: message });

/** A gRPC-Web call in binary carrying these message bytes as its one frame. */
export const grpcWebPost = (ctx: CheckContext, message: Uint8Array): Promise<PlainResponse> =>
  exchange(ctx, {
    headers: { "content-type": "application/grpc-web+proto", "x-grpc-web": "1" },
    body: frame(0, message),
  });

/** The media type of a response, lowercased, without parameters (not content-type's parse, which throws on `a/b;`). */
export const mediaType = (res: PlainResponse): string =>
  (header(res, "content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
