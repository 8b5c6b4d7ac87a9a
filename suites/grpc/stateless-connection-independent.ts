// grpc.stateless.connection-independent: the same reply on a reused connection, a fresh one, and under concurrency.
import { fail, pass, skip, type CheckDefinition } from "../../harness/check.js";
import { baseline, helloReply, show, variationProfile, type Reply } from "./_internals/calls.js";

const CONCURRENT = 8;

export const statelessConnectionIndependent: CheckDefinition = {
  id: "grpc.stateless.connection-independent",
  title: `the same reply on a reused connection, on fresh ones, and with ${CONCURRENT} calls in flight`,
  severity: "MUST",
  area: "grpc",
  profile: "contract",
  spec: "§1.2 (stateless server)",
  async run(ctx) {
    const variation = await variationProfile(ctx);
    if (!variation.deterministic) return skip(`the reply varies by itself, so replies cannot be compared (${variation.evidence})`);
    const body = "same everywhere";
    const base = await baseline(ctx, body);
    if (!base.ok) return fail(`not served: ${base.reason}`);
    const replies: [string, Reply][] = [
      ["the shared connection", await helloReply(ctx, body)],
      ["the shared connection again", await helloReply(ctx, body)],
    ];
    const shared = await Promise.all(Array.from({ length: CONCURRENT }, () => helloReply(ctx, body)));
    const fresh = await Promise.all(Array.from({ length: CONCURRENT / 2 }, () => helloReply(ctx, body, { channel: "fresh" })));
    shared.forEach((r, i) => replies.push([`concurrent call ${i + 1} on the shared connection`, r]));
    fresh.forEach((r, i) => replies.push([`concurrent call ${i + 1} on a fresh connection`, r]));
    for (const [where, reply] of replies) {
      if (!reply.ok) return fail(`${where}: ${reply.reason}`);
      if (reply.message.body !== base.message.body) {
        return fail(`${where} got ${show(reply.message.body)}; a fresh connection got ${show(base.message.body)}`);
      }
    }
    return pass(`${replies.length + 1} calls, one reply ${show(base.message.body)}`);
  },
};
