// grpc.stateless.replicas: with --replica, every instance gives the same reply to the same request.
import { encodeMessage } from "../../harness/_internals/message.js";
import { fail, pass, skip, type CheckDefinition } from "../../harness/check.js";
import { asReply, hello, show, variationProfile } from "./_internals/calls.js";

const BODIES = ["", "replica", "Grüße 🌍"];

export const statelessReplicas: CheckDefinition = {
  id: "grpc.stateless.replicas",
  title: "every instance (--replica) gives the same reply to the same request",
  severity: "MUST",
  area: "grpc",
  profile: "contract",
  spec: "§1.2 (no client context on any server)",
  async run(ctx) {
    if (ctx.replicas.length === 0) return skip("no --replica given");
    const variation = await variationProfile(ctx);
    if (!variation.deterministic) return skip(`the reply varies by itself, so replicas cannot be compared (${variation.evidence})`);
    for (const body of BODIES) {
      const main = asReply(await hello(ctx, encodeMessage(body)));
      if (!main.ok) return fail(`${ctx.grpc?.address}: ${main.reason}`);
      for (const replica of ctx.replicas) {
        const other = asReply(await replica.unary(encodeMessage(body)));
        if (!other.ok) return fail(`replica ${replica.address}: ${other.reason}`);
        if (other.message.body !== main.message.body) {
          return fail(`${show(body)}: ${ctx.grpc?.address} replied ${show(main.message.body)}, replica ${replica.address} ${show(other.message.body)}`);
        }
      }
    }
    return pass(`${ctx.replicas.length + 1} instances agree on ${BODIES.length} requests`);
  },
};
