// grpc.stateless.connection-independent: the same reply on a reused connection, a fresh one, and under concurrency.
import { encodeMessage } from "../../contract/message.js";
import { fail, pass, skip, type CheckContext, type CheckDefinition } from "../../harness/check.js";
import { Status, type UnaryCallOptions } from "../../harness/targets/grpc-target.js";
import { asReply, baseline, hello, show, type Reply } from "./_internals/calls.js";
import { sameReply, variationProfile } from "./_internals/variation.js";

const CONCURRENT = 8;
/** Retries of a call refused with RESOURCE_EXHAUSTED: a cap on calls in flight is a limit, not state. */
const RETRIES = 3;

/**
 * One call; when the target refuses it with RESOURCE_EXHAUSTED (a legal cap on calls in flight: the specification
 * shows no limit), it is sent again on its own, after the others, a few times at most.
 */
async function callBeyondLimit(ctx: CheckContext, body: string, options: UnaryCallOptions, limited: { count: number }): Promise<Reply> {
  let result = await hello(ctx, encodeMessage(body), options);
  for (let i = 0; i < RETRIES && result.code === Status.RESOURCE_EXHAUSTED; i++) {
    limited.count++;
    await new Promise((r) => setTimeout(r, 50 * (i + 1)));
    result = await hello(ctx, encodeMessage(body), options);
  }
  return asReply(result);
}

export const statelessConnectionIndependent: CheckDefinition = {
  id: "grpc.stateless.connection-independent",
  title: `the same reply on a reused connection, on fresh ones, and with ${CONCURRENT} calls in flight`,
  severity: "MUST",
  area: "grpc",
  profile: "contract",
  spec: "§1.2 (stateless server)",
  // Compares replies over time: data other checks store may legally change a reply, so nothing runs beside it.
  sharing: "alone",
  async run(ctx) {
    const variation = await variationProfile(ctx);
    if (variation.kind === "free" || variation.kind === "history") {
      return skip(`replies cannot be compared (${variation.evidence}); grpc.stateless.deterministic and history-independent judge that`);
    }
    const body = "same everywhere";
    const base = await baseline(ctx, body);
    if (!base.ok) return fail(`not served: ${base.reason}`);
    const limited = { count: 0 };
    const replies: [string, Reply][] = [
      ["the shared connection", await callBeyondLimit(ctx, body, {}, limited)],
      ["the shared connection again", await callBeyondLimit(ctx, body, {}, limited)],
    ];
    const shared = await Promise.all(Array.from({ length: CONCURRENT }, () => callBeyondLimit(ctx, body, {}, limited)));
    const fresh = await Promise.all(Array.from({ length: CONCURRENT / 2 }, () => callBeyondLimit(ctx, body, { channel: "fresh" }, limited)));
    shared.forEach((r, i) => replies.push([`concurrent call ${i + 1} on the shared connection`, r]));
    fresh.forEach((r, i) => replies.push([`concurrent call ${i + 1} on a fresh connection`, r]));
    let judged = 0;
    for (const [where, reply] of replies) {
      // Still refused for a limit after its retries: nothing to judge in it, and no state shown by it.
      if (!reply.ok && reply.reason.startsWith(`status ${Status.RESOURCE_EXHAUSTED} `)) continue;
      if (!reply.ok) return fail(`${where}: ${reply.reason}`);
      judged++;
      if (!sameReply(variation, base.message.body, reply.message.body)) {
        return fail(`${where} got ${show(reply.message.body)}; a fresh connection got ${show(base.message.body)}`);
      }
    }
    if (judged === 0) return skip("every call beside the first was refused with RESOURCE_EXHAUSTED, even when retried alone: nothing to compare");
    const note = limited.count > 0 ? `; ${limited.count} call(s) refused with RESOURCE_EXHAUSTED (a limit on calls in flight) were sent again` : "";
    const segments = variation.kind === "segments" ? " (apart from segments that vary by itself)" : "";
    return pass(`${judged + 1} calls, one reply ${show(base.message.body)}${segments}${note}`);
  },
};
