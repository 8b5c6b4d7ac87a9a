// What grpc checks share: calling Hello, judging a reply's shape, and knowing whether the reply varies by itself.
import type { CheckContext } from "../../../harness/check.js";
import { decodeMessage, encodeMessage, hex, type DecodedMessage } from "../../../harness/_internals/message.js";
import { statusText, type GrpcTarget, type UnaryCallOptions, type UnaryResult } from "../../../harness/targets/grpc-target.js";

export function target(ctx: CheckContext): GrpcTarget {
  if (!ctx.grpc) throw new Error("no gRPC target"); // the runner skips grpc checks without one
  return ctx.grpc;
}

export type Reply = { ok: true; message: DecodedMessage; raw: Uint8Array } | { ok: false; reason: string };

/** Judges a unary result as a reply: OK, one response message, which decodes strictly as Message. */
export function asReply(result: UnaryResult): Reply {
  if (result.code !== 0) return { ok: false, reason: `status ${statusText(result.code, result.details)}` };
  if (!result.response) return { ok: false, reason: "status OK but no response message" };
  const decoded = decodeMessage(result.response);
  if (!decoded.ok) return { ok: false, reason: `the reply does not decode as Message: ${decoded.reason} (bytes ${hex(result.response)})` };
  return { ok: true, message: decoded.message, raw: result.response };
}

export async function hello(ctx: CheckContext, request: Uint8Array, options?: UnaryCallOptions): Promise<UnaryResult> {
  return target(ctx).unary(request, options);
}

export async function helloReply(ctx: CheckContext, body: string, options?: UnaryCallOptions): Promise<Reply> {
  return asReply(await hello(ctx, encodeMessage(body), options));
}

/** A printable form of a body for messages: JSON-quoted, cut at 120 characters. */
export function show(body: string): string {
  const q = JSON.stringify(body);
  return q.length > 120 ? `${q.slice(0, 117)}..."` : q;
}

export interface VariationProfile {
  /** The same request in fresh contexts got the same reply every time (true when nothing could be compared). */
  deterministic: boolean;
  /** Whether replies were there to compare at all. */
  compared: boolean;
  /** What was seen, for reports. */
  evidence: string;
}

const PROBE_BODIES = ["conformance-probe", ""];
const PROBE_REPEATS = 3;

/**
 * Whether the target's reply varies by itself: the same requests, each on a fresh connection, a few times.
 * History checks ask this so that a clock in the reply is not mistaken for state.
 */
export function variationProfile(ctx: CheckContext): Promise<VariationProfile> {
  let memo = ctx.memo.get("variation") as Promise<VariationProfile> | undefined;
  if (!memo) {
    memo = (async () => {
      for (const body of PROBE_BODIES) {
        const seen = new Set<string>();
        for (let i = 0; i < PROBE_REPEATS; i++) {
          const reply = await helloReply(ctx, body, { channel: "fresh" });
          if (!reply.ok) return { deterministic: true, compared: false, evidence: `no reply to compare (${reply.reason})` };
          seen.add(reply.message.body);
        }
        if (seen.size > 1) {
          return {
            deterministic: false,
            compared: true,
            evidence: `${show(body)} got ${seen.size} different replies in ${PROBE_REPEATS} fresh calls: ${[...seen].map(show).join(", ")}`,
          };
        }
      }
      return { deterministic: true, compared: true, evidence: `the same reply to each probe in ${PROBE_REPEATS} fresh calls` };
    })();
    ctx.memo.set("variation", memo);
  }
  return memo;
}

/** The reply to `body` in a fresh context: the baseline that history and connection checks compare with. */
export async function baseline(ctx: CheckContext, body: string): Promise<Reply> {
  return helloReply(ctx, body, { channel: "fresh" });
}
