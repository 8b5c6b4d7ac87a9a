// grpc.stateless.history-independent (property): the reply to R does not depend on the requests that came before.
import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { encodeMessage } from "../../common/message.js";
import { fail, type CheckContext, type CheckDefinition } from "../../harness/check.js";
import { asReply, baseline, hello, helloReply, journal, openAhead, show } from "./_internals/calls.js";
import type { VariationProfile } from "./_internals/variation.js";
import { findCallCounter } from "./_internals/counter.js";
import { exclusively } from "./_internals/exclusive.js";
import { checkProperty, type PropertyOptions } from "./_internals/property.js";
import { besideOthers, sameReply, variationProfile } from "./_internals/variation.js";

const token = () =>
  randomBytes(5)
    .toString("hex")
    .replace(/\d/g, (d) => "ghijklmnop"[Number(d)]!);

/**
 * Leak probes: A = P+x then B = P+y sharing a prefix (and the same with a suffix); a stateless server cannot put x,
 * which only A carried, into B's reply, whatever its reply means. Catches caches keyed by part of the body and
 * replays of earlier replies. Four calls each.
 */
async function findLeak(ctx: CheckContext): Promise<string | undefined> {
  const shared = token() + token();
  const shapes: [string, (mine: string) => string][] = [
    ["a prefix", (mine) => `${shared} ${mine}`],
    ["a suffix", (mine) => `${mine} ${shared}`],
  ];
  for (const [what, make] of shapes) {
    const x = token();
    const y = token();
    const a = make(x);
    const b = make(y);
    const first = await helloReply(ctx, a);
    if (!first.ok) return undefined;
    // The fresh connection connects while B goes on the same one (asked once A is answered; the pool may hand over
    // one another probe asked for): like one opened at its call, no call went on it before B.
    const ahead = openAhead(ctx, 1);
    try {
      for (const options of [{}, { channel: "fresh" as const }]) {
        const second = await helloReply(ctx, b, options);
        if (second.ok && second.message.body.includes(x)) {
          const from = options.channel === "fresh" ? "on a fresh connection" : "on the same connection";
          return (
            `the reply to ${show(b)} ${from} carries ${show(x)}, which only the earlier request ${show(a)} ` +
            `(sharing ${what} with it) carried: ${show(second.message.body)}`
          );
        }
      }
    } finally {
      ahead();
    }
  }
  return undefined;
}

/**
 * Early requests of the run asked again: the same reply, after every call made since (a bounded few). Asked side by
 * side, each on a fresh connection: the order they are asked in changes nothing a stateless server replies, and a
 * server whose state started late has started it before any of them. The first in the journal that differs is told.
 */
async function findLateState(ctx: CheckContext, profile: VariationProfile): Promise<string | undefined> {
  const calls = ctx.grpc?.callCount ?? 0;
  const entries = journal(ctx).slice(0, 4);
  const agains = await Promise.all(
    entries.map(async (entry) => asReply(await hello(ctx, entry.request, { channel: "fresh" }))),
  );
  for (const [i, entry] of entries.entries()) {
    const again = agains[i]!;
    if (!again.ok) continue;
    if (!sameReply(profile, entry.body, again.message.body)) {
      return (
        `the reply to ${show(entry.requestBody)} was ${show(entry.body)} at call ${entry.atCall} of the run, but ` +
        `${show(again.message.body)} on a fresh connection after ${calls - entry.atCall} other calls: state that ` +
        `started late`
      );
    }
  }
  return undefined;
}

/**
 * The property's cases: each one's baseline and its history from another client go on fresh connections, opened
 * ahead; a case is its baseline, its history and its request again, one after another (the heaviest tried first).
 */
const CASES: PropertyOptions<[string, string[], boolean]> = {
  maxRuns: 50,
  fresh: ([, history, other]) => 1 + (other ? history.length : 0),
  weight: ([, history]) => 2 + history.length,
};

export const statelessHistoryIndependent: CheckDefinition = {
  id: "grpc.stateless.history-independent",
  title: "the reply to a request is the same whatever other requests, from this or other clients, came before it",
  severity: "MUST",
  area: "grpc",
  profile: "contract",
  spec: "§1.2 (each request fully independent; no client context stored)",
  // Compares replies over time: data other checks store may legally change a reply, so only the other history
  // checks run beside it, each with bodies of its own (harness/check.ts, Sharing).
  sharing: "history",
  run(ctx) {
    return besideOthers(ctx, async () => {
      // Started, not awaited: its pause overlaps the leak probes and the property's calls, which need it only to judge.
      const profile = variationProfile(ctx);
      profile.catch(() => undefined);
      // A leak is a later call carrying what only an earlier one did: no other check's call may come between.
      const leak = await exclusively(ctx, () => findLeak(ctx));
      const marker = "hist:";
      const request = fc.string({ maxLength: 24 }).filter((s) => !s.includes(marker));
      const earlier = fc.array(
        fc.string({ minLength: 4, maxLength: 16 }).map((s) => `${marker}${s}`),
        { maxLength: 4 },
      );
      const outcome = await checkProperty(
        ctx,
        fc.tuple(request, earlier, fc.boolean()),
        async ([r, history, fromOtherClient]) => {
          const before = await baseline(ctx, r);
          if (!before.ok) throw new Error(`the request ${show(r)} was not served: ${before.reason}`);
          for (const h of history) {
            const res = await hello(ctx, encodeMessage(h), fromOtherClient ? { channel: "fresh" } : {});
            if (res.code !== 0) throw new Error(`an earlier request ${show(h)} was not served`);
          }
          const after = asReply(await hello(ctx, encodeMessage(r)));
          if (!after.ok)
            throw new Error(`after ${history.length} other request(s) ${show(r)} was not served: ${after.reason}`);
          const leaked = history.find((h) => after.message.body.includes(h) && !before.message.body.includes(h));
          if (leaked)
            throw new Error(`the reply to ${show(r)} carries ${show(leaked)}, the body of an earlier request`);
          // The profile is awaited only for replies that differ: the same reply needs none, and the cases go on
          // while the probe pauses.
          if (
            before.message.body !== after.message.body &&
            !sameReply(await profile, before.message.body, after.message.body)
          ) {
            throw new Error(
              `the reply to ${show(r)} was ${show(before.message.body)} in a fresh context but ` +
                `${show(after.message.body)} after other requests`,
            );
          }
        },
        ([r, history, other]) =>
          `request ${show(r)} after ${history.length === 0 ? "no other request" : history.map(show).join(", ")}` +
          `${other ? " from another client" : " on the same connection"}`,
        CASES,
      );
      // Judged in this order, whatever finished first: what the profile showed, call counting, leaks, the property.
      const variation = await profile;
      if (variation.kind === "history") return fail(variation.evidence);
      if (!variation.deterministic) {
        // A reply that varies by itself cannot be compared whole; what can still be judged is judged.
        const counter = await findCallCounter(ctx);
        if (counter) return fail(counter);
      }
      if (leak) return fail(leak);
      // Asked after the property's calls, so that state which starts only after some number of calls has started.
      const late =
        outcome.status !== "pass" || variation.kind === "free" ? undefined : await findLateState(ctx, variation);
      if (late) return fail(late);
      if (outcome.status === "pass" && variation.kind === "segments") {
        return {
          ...outcome,
          message: `${outcome.message}; compared apart from segments that vary by itself (${variation.evidence})`,
        };
      }
      if (outcome.status === "pass" && variation.kind === "free") {
        return {
          ...outcome,
          message:
            `${outcome.message}; the reply varies by itself, so only leaks of earlier requests and call counting ` +
            `were judged`,
        };
      }
      return outcome;
    });
  },
};
