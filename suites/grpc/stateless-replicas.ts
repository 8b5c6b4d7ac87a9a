// grpc.stateless.replicas: with --replica, history built on one instance does not change another's replies; with
// --replica-mode equal, every instance also gives the same reply to the same request.
import { randomBytes } from "node:crypto";
import { encodeMessage } from "../../contract/message.js";
import { fail, pass, skip, type CheckContext, type CheckDefinition } from "../../harness/check.js";
import type { GrpcTarget } from "../../harness/targets/grpc-target.js";
import { asReply, hello, show, type Reply } from "./_internals/calls.js";
import { gated } from "./_internals/exclusive.js";
import { besideOthers, sameReply, variationProfile, type VariationProfile } from "./_internals/variation.js";

const BODIES = ["", "replica", "Grüße 🌍"];
/** Calls that build history on one instance between two questions to another. */
const HISTORY = 4;

const ask = async (ctx: CheckContext, t: GrpcTarget, body: string): Promise<Reply> =>
  asReply(await gated(ctx, () => t.unary(encodeMessage(body), { channel: "fresh" })));

/**
 * Asks `other` a new request, then sends it (and more) to `builder`, then asks `other` again: a stateless pair of
 * instances gives `other`'s second answer the first's (what varies by itself aside), and never what only
 * `builder` was sent.
 */
async function historyCrosses(
  ctx: CheckContext,
  profile: VariationProfile,
  builder: GrpcTarget,
  other: GrpcTarget,
): Promise<string | undefined> {
  const request = `replica-${randomBytes(5).toString("hex")}`;
  const secret = `only-to-${randomBytes(5).toString("hex")}`;
  const first = await ask(ctx, other, request);
  if (!first.ok) return `${other.address}: ${first.reason}`;
  for (let i = 0; i < HISTORY; i++) {
    const built = asReply(
      await gated(ctx, () => builder.unary(encodeMessage(i % 2 === 0 ? request : `${secret} ${request}`))),
    );
    if (!built.ok) return `${builder.address}: ${built.reason}`;
  }
  const second = await ask(ctx, other, request);
  if (!second.ok) return `${other.address}: ${second.reason}`;
  if (second.message.body.includes(secret)) {
    return (
      `${other.address} replied ${show(second.message.body)} to ${show(request)}: it carries ${show(secret)}, sent ` +
      `only to ${builder.address}`
    );
  }
  if (!sameReply(profile, first.message.body, second.message.body)) {
    return (
      `${other.address} replied ${show(first.message.body)} to ${show(request)}, then ${show(second.message.body)} ` +
      `after ${builder.address} was sent it ${HISTORY / 2} times: history on one instance changed another's reply`
    );
  }
  return undefined;
}

export const statelessReplicas: CheckDefinition = {
  id: "grpc.stateless.replicas",
  title:
    "history built on one instance (--replica) never changes another's replies (--replica-mode equal: every " +
    "instance gives the same reply)",
  severity: "MUST",
  area: "grpc",
  profile: "contract",
  spec: "§1.2 (no client context on any server)",
  // Compares replies over time: data other checks store may legally change a reply, so only the other history
  // checks run beside it, each with bodies of its own (harness/check.ts, Sharing).
  sharing: "history",
  run(ctx) {
    return besideOthers(ctx, async () => {
      if (ctx.replicas.length === 0)
        return skip(
          "no other instance given (--replica ADDRESS), so statelessness across replicas was not judged",
          "--replica",
        );
      const main = ctx.grpc;
      if (!main) return skip("no gRPC target");
      const variation = await variationProfile(ctx);
      if (variation.kind === "free")
        return skip(`the reply varies by itself, so replicas cannot be compared (${variation.evidence})`);
      for (const replica of ctx.replicas) {
        const crossed =
          (await historyCrosses(ctx, variation, main, replica)) ??
          (await historyCrosses(ctx, variation, replica, main));
        if (crossed) return fail(crossed);
      }
      if (ctx.replicaMode !== "equal") {
        return pass(
          `history built on each of ${ctx.replicas.length + 1} instances changed no other's replies (replies not ` +
            `compared between instances: --replica-mode equal does)`,
        );
      }
      for (const body of BODIES) {
        const mine = asReply(await hello(ctx, encodeMessage(body)));
        if (!mine.ok) return fail(`${main.address}: ${mine.reason}`);
        for (const replica of ctx.replicas) {
          const other = await ask(ctx, replica, body);
          if (!other.ok) return fail(`replica ${replica.address}: ${other.reason}`);
          if (!sameReply(variation, mine.message.body, other.message.body)) {
            return fail(
              `${show(body)}: ${main.address} replied ${show(mine.message.body)}, replica ${replica.address} ` +
                `${show(other.message.body)}`,
            );
          }
        }
      }
      return pass(
        `${ctx.replicas.length + 1} instances agree on ${BODIES.length} requests, and history on one changed no ` +
          `other's replies`,
      );
    });
  },
};
