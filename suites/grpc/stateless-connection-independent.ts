// grpc.stateless.connection-independent: the same reply on a reused connection, a fresh one, and under concurrency.
import { encodeMessage } from "../../contract/message.js";
import { fail, pass, skip, type CheckContext, type CheckDefinition } from "../../harness/check.js";
import { Status, type UnaryCallOptions } from "../../harness/protocols/rpc.js";
import { asReply, baseline, hello, show, type Reply } from "./_internals/calls.js";
import { besideOthers, sameReply, variationProfile, type VariationProfile } from "./_internals/variation.js";

const CONCURRENT = 8;
/** Retries of a call refused with RESOURCE_EXHAUSTED: a cap on calls in flight is a limit, not state. */
const RETRIES = 3;

/**
 * One call; when the target refuses it with RESOURCE_EXHAUSTED (a legal cap on calls in flight: the specification
 * shows no limit), it is sent again on its own, after the others, a few times at most.
 */
async function callBeyondLimit(
  ctx: CheckContext,
  body: string,
  options: UnaryCallOptions,
  limited: { count: number },
): Promise<Reply> {
  let result = await hello(ctx, encodeMessage(body), options);
  for (let i = 0; i < RETRIES && result.code === Status.RESOURCE_EXHAUSTED; i++) {
    limited.count++;
    await new Promise((r) => setTimeout(r, 50 * (i + 1)));
    result = await hello(ctx, encodeMessage(body), options);
  }
  return asReply(result);
}

interface Round {
  base: Reply;
  replies: [string, Reply][];
}

/** One round: the baseline on a fresh connection, then the same request on the shared one, concurrently, and fresh. */
async function round(ctx: CheckContext, body: string, limited: { count: number }): Promise<Round> {
  const base = await baseline(ctx, body);
  if (!base.ok) return { base, replies: [] };
  const replies: [string, Reply][] = [
    ["the shared connection", await callBeyondLimit(ctx, body, {}, limited)],
    ["the shared connection again", await callBeyondLimit(ctx, body, {}, limited)],
  ];
  const shared = await Promise.all(Array.from({ length: CONCURRENT }, () => callBeyondLimit(ctx, body, {}, limited)));
  const fresh = await Promise.all(
    Array.from({ length: CONCURRENT / 2 }, () => callBeyondLimit(ctx, body, { channel: "fresh" }, limited)),
  );
  shared.forEach((r, i) => replies.push([`concurrent call ${i + 1} on the shared connection`, r]));
  fresh.forEach((r, i) => replies.push([`concurrent call ${i + 1} on a fresh connection`, r]));
  return { base, replies };
}

/** The round's defect, if any, and how many replies were judged. */
function judge(
  variation: VariationProfile,
  { base, replies }: Round,
): { defect?: string; differs?: boolean; judged: number } {
  if (!base.ok) return { defect: `not served: ${base.reason}`, judged: 0 };
  let judged = 0;
  for (const [where, reply] of replies) {
    // Still refused for a limit after its retries: nothing to judge in it, and no state shown by it.
    if (!reply.ok && reply.reason.startsWith(`status ${Status.RESOURCE_EXHAUSTED} `)) continue;
    if (!reply.ok) return { defect: `${where}: ${reply.reason}`, judged };
    judged++;
    if (!sameReply(variation, base.message.body, reply.message.body)) {
      return {
        defect: `${where} got ${show(reply.message.body)}; a fresh connection got ${show(base.message.body)}`,
        differs: true,
        judged,
      };
    }
  }
  return { judged };
}

/**
 * The first round's verdict, or, when a reply in it differed, the second's: a reply that changed during the first
 * round may have changed with the run's calls (state that started late, which grpc.stateless.history-independent
 * judges), not with the connection. It is the run's, not the connection's, only when the fresh baseline changed
 * too and the second round agrees with it throughout; otherwise the first difference stands.
 */
async function confirmed(
  variation: VariationProfile,
  first: Round,
  again: () => Promise<Round>,
): Promise<{ judged: number; base: string; changed: string; defect?: string }> {
  const one = judge(variation, first);
  const firstBase = first.base.ok ? first.base.message.body : "";
  if (!one.differs)
    return {
      judged: one.judged,
      base: firstBase,
      changed: "",
      ...(one.defect !== undefined && { defect: one.defect }),
    };
  const second = await again();
  const two = judge(variation, second);
  if (two.defect !== undefined) return { judged: two.judged, base: firstBase, changed: "", defect: two.defect };
  const secondBase = second.base.ok ? second.base.message.body : firstBase;
  if (sameReply(variation, firstBase, secondBase))
    return { judged: one.judged, base: firstBase, changed: "", defect: one.defect! };
  const changed =
    `; the reply to it on a fresh connection changed during a first round (from ${show(firstBase)}), and was the ` +
    `same on every connection when asked again: state that started late, which grpc.stateless.history-independent ` +
    `judges`;
  return { judged: two.judged, base: secondBase, changed };
}

export const statelessConnectionIndependent: CheckDefinition = {
  id: "grpc.stateless.connection-independent",
  title: `the same reply on a reused connection, on fresh ones, and with ${CONCURRENT} calls in flight`,
  severity: "MUST",
  area: "grpc",
  profile: "contract",
  spec: "§1.2 (stateless server)",
  // Compares replies over time: data other checks store may legally change a reply, so only the other history
  // checks run beside it, each with bodies of its own (harness/check.ts, Sharing).
  sharing: "history",
  run(ctx) {
    return besideOthers(ctx, async () => {
      // Started, not awaited: its pause overlaps the calls below, which need it only to judge.
      const profile = variationProfile(ctx);
      profile.catch(() => undefined);
      const body = "same everywhere";
      const limited = { count: 0 };
      const first = await round(ctx, body, limited);
      const variation = await profile;
      if (variation.kind === "free" || variation.kind === "history") {
        return skip(
          `replies cannot be compared (${variation.evidence}); grpc.stateless.deterministic and ` +
            `history-independent judge that`,
        );
      }
      const { judged, base, changed, defect } = await confirmed(variation, first, () => round(ctx, body, limited));
      if (defect !== undefined) return fail(defect);
      if (judged === 0)
        return skip(
          "every call beside the first was refused with RESOURCE_EXHAUSTED, even when retried alone: nothing to " +
            "compare",
        );
      const note =
        limited.count > 0
          ? `; ${limited.count} call(s) refused with RESOURCE_EXHAUSTED (a limit on calls in flight) were sent again`
          : "";
      const segments = variation.kind === "segments" ? " (apart from segments that vary by itself)" : "";
      return pass(`${judged + 1} calls, one reply ${show(base)}${segments}${note}${changed}`);
    });
  },
};
