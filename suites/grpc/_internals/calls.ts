// What grpc checks share: calling Hello, judging a reply's shape, and knowing whether the reply varies by itself.
import type { CheckContext } from "../../../harness/check.js";
import { decodeMessage, encodeMessage, hex, type DecodedMessage } from "../../../common/message.js";
import { gated } from "./exclusive.js";
import type { GrpcTarget } from "../../../harness/targets/grpc-target.js";
import { statusText, type UnaryCallOptions, type UnaryResult } from "../../../harness/protocols/rpc.js";

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
  if (!decoded.ok)
    return {
      ok: false,
      reason: `the reply does not decode as Message: ${decoded.reason} (bytes ${hex(result.response)})`,
    };
  return { ok: true, message: decoded.message, raw: result.response };
}

/** A request's first reply in this run, and how many calls the run had made when it came. */
export interface JournalEntry {
  request: Uint8Array;
  body: string;
  /** The request's own body, for reports. */
  requestBody: string;
  atCall: number;
}

const JOURNAL_SIZE = 16;

/**
 * The first replies of the run, to small plain Hello requests: asked again later, they show state that starts
 * late (after the Nth call) whichever check happened to make the first calls.
 */
export function journal(ctx: CheckContext): JournalEntry[] {
  // Keyed by the run's memo, which every check of one run shares.
  let entries = journals.get(ctx.memo);
  if (!entries) journals.set(ctx.memo, (entries = []));
  return entries;
}
const journals = new WeakMap<object, JournalEntry[]>();

export async function hello(ctx: CheckContext, request: Uint8Array, options?: UnaryCallOptions): Promise<UnaryResult> {
  const result = await gated(ctx, () => target(ctx).unary(request, options));
  const entries = journal(ctx);
  if (
    entries.length < JOURNAL_SIZE &&
    !options?.metadata &&
    !options?.path &&
    request.length <= 256 &&
    result.code === 0 &&
    result.response
  ) {
    const asked = decodeMessage(request);
    const reply = decodeMessage(result.response);
    const key = hex(request);
    if (asked.ok && reply.ok && !entries.some((e) => hex(e.request) === key)) {
      entries.push({
        request,
        body: reply.message.body,
        requestBody: asked.message.body,
        atCall: target(ctx).callCount,
      });
    }
  }
  return result;
}

export async function helloReply(ctx: CheckContext, body: string, options?: UnaryCallOptions): Promise<Reply> {
  return asReply(await hello(ctx, encodeMessage(body), options));
}

/** A printable form of a body for messages: JSON-quoted, cut at 120 characters. */
export function show(body: string): string {
  const q = JSON.stringify(body);
  return q.length > 120 ? `${q.slice(0, 117)}..."` : q;
}

/**
 * Opens `count` fresh connections ahead for this check's calls to come on fresh connections, within its bound on
 * what it has in flight (--concurrency): they connect side by side while its calls go on, and each is still taken
 * by one call. None at --concurrency 1, which does one thing at a time. Returns what closes those not taken.
 */
export function openAhead(ctx: CheckContext, count: number): () => void {
  if (ctx.parallelism <= 1 || count < 1) return () => undefined;
  return target(ctx).openAhead?.(count, ctx.parallelism) ?? (() => undefined);
}

/** The reply to `body` in a fresh context: the baseline that history and connection checks compare with. */
export async function baseline(ctx: CheckContext, body: string): Promise<Reply> {
  return helloReply(ctx, body, { channel: "fresh" });
}
