// grpc.stateless.history-independent (property): the reply to R does not depend on the requests that came before.
import fc from "fast-check";
import { encodeMessage } from "../../harness/_internals/message.js";
import { fail, type CheckDefinition } from "../../harness/check.js";
import { baseline, hello, asReply, show, variationProfile } from "./_internals/calls.js";
import { findCallCounter } from "./_internals/counter.js";
import { checkProperty } from "./_internals/property.js";

export const statelessHistoryIndependent: CheckDefinition = {
  id: "grpc.stateless.history-independent",
  title: "the reply to a request is the same whatever other requests, from this or other clients, came before it",
  severity: "MUST",
  area: "grpc",
  profile: "contract",
  spec: "§1.2 (each request fully independent; no client context stored)",
  async run(ctx) {
    const variation = await variationProfile(ctx);
    if (!variation.deterministic) {
      // A reply that varies by itself cannot be compared whole; what can still be judged is judged.
      const counter = await findCallCounter(ctx);
      if (counter) return fail(counter);
    }
    const marker = "hist:";
    const request = fc.string({ maxLength: 24 }).filter((s) => !s.includes(marker));
    const earlier = fc.array(fc.string({ minLength: 4, maxLength: 16 }).map((s) => `${marker}${s}`), { maxLength: 4 });
    const property = fc.asyncProperty(request, earlier, fc.boolean(), async (r, history, fromOtherClient) => {
      const before = await baseline(ctx, r);
      if (!before.ok) throw new Error(`the request ${show(r)} was not served: ${before.reason}`);
      for (const h of history) {
        const res = await hello(ctx, encodeMessage(h), fromOtherClient ? { channel: "fresh" } : {});
        if (res.code !== 0) throw new Error(`an earlier request ${show(h)} was not served`);
      }
      const after = asReply(await hello(ctx, encodeMessage(r)));
      if (!after.ok) throw new Error(`after ${history.length} other request(s) ${show(r)} was not served: ${after.reason}`);
      if (variation.deterministic) {
        if (after.message.body !== before.message.body) {
          throw new Error(`the reply to ${show(r)} was ${show(before.message.body)} in a fresh context but ${show(after.message.body)} after other requests`);
        }
        return;
      }
      const leaked = history.find((h) => after.message.body.includes(h) && !before.message.body.includes(h));
      if (leaked) throw new Error(`the reply to ${show(r)} carries ${show(leaked)}, the body of an earlier request`);
    });
    const outcome = await checkProperty(ctx, property, ([r, history, other]) =>
      `request ${show(r)} after ${history.length === 0 ? "no other request" : history.map(show).join(", ")}${other ? " from another client" : " on the same connection"}`,
      { maxRuns: 50 },
    );
    if (outcome.status === "pass" && !variation.deterministic) {
      return { ...outcome, message: `${outcome.message}; the reply varies by itself, so only leaks of earlier requests and call counting were judged` };
    }
    return outcome;
  },
};
