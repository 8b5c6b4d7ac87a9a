// grpc.stateless.metadata-isolated: metadata sent on one call never shows in the reply to a later call.
import { randomBytes } from "node:crypto";
import { fail, pass, type CheckDefinition } from "../../harness/check.js";
import { hello, openAhead } from "./_internals/calls.js";
import { exclusively } from "./_internals/exclusive.js";
import { besideOthers } from "./_internals/variation.js";
import { encodeMessage } from "../../common/message.js";
import type { UnaryResult } from "../../harness/protocols/rpc.js";

function contains(result: UnaryResult, needles: string[]): string | undefined {
  const body = result.response ? Buffer.from(result.response).toString("latin1") : "";
  const meta = JSON.stringify([result.headers, result.trailers]);
  for (const n of needles) {
    if (body.includes(n)) return "reply body";
    if (meta.includes(n)) return "response metadata";
  }
  return undefined;
}

export const statelessMetadataIsolated: CheckDefinition = {
  id: "grpc.stateless.metadata-isolated",
  title: "custom metadata sent on one call never shows in the reply or metadata of a later call",
  severity: "MUST",
  area: "grpc",
  profile: "contract",
  spec: "§1.1-1.2 (the client keeps its own context; the server stores none)",
  // Compares replies over time: data other checks store may legally change a reply, so only the other history
  // checks run beside it, each with bodies of its own (harness/check.ts, Sharing).
  sharing: "history",
  run(ctx) {
    // Its question is what the calls between its first and a later one carry: no other check's call may come between.
    return besideOthers(ctx, () =>
      exclusively(ctx, async () => {
        const token = `tok${randomBytes(8).toString("hex")}`;
        const binary = randomBytes(12);
        const needles = [token, binary.toString("base64").replace(/=+$/, ""), binary.toString("latin1")];
        // Header names no user gives (a random suffix), so the probe never collides with the run's own --metadata.
        const suffix = randomBytes(4).toString("hex");
        const own = { [`x-conformance-token-${suffix}`]: token, [`x-conformance-token-${suffix}-bin`]: binary };
        // A credential-shaped header too, where the target takes one: the user's own authorization (--metadata) or a
        // server that checks bearer tokens may refuse a second or unknown one, which is its right, not a defect.
        let first = await hello(ctx, encodeMessage("first"), {
          metadata: { ...own, authorization: `Bearer ${token}` },
        });
        let credential = "and an authorization header";
        if (first.code !== 0) {
          first = await hello(ctx, encodeMessage("first"), { metadata: own });
          credential =
            `(an extra authorization header was refused with status ` +
            `${first.code === 0 ? "other than OK" : first.code}, so it was left out)`;
        }
        if (first.code !== 0) return fail(`the call carrying metadata was not served (status ${first.code})`);
        // The fresh connection connects while the next call goes on the same one (asked once the metadata's call is
        // answered; the pool may hand over one another probe asked for): like one opened at its call, no call went
        // on it before.
        const ahead = openAhead(ctx, 1);
        try {
          for (const [where, options] of [
            ["the same connection", {}],
            ["a fresh connection", { channel: "fresh" as const }],
          ] as const) {
            const later = await hello(ctx, encodeMessage("later"), options);
            const leak = contains(later, needles);
            if (leak)
              return fail(`a later call on ${where} got the earlier call's metadata back in its ${leak}`, {
                details: [`token: ${token}`],
              });
          }
        } finally {
          ahead();
        }
        return pass(
          `no trace of an earlier call's metadata (custom text and -bin headers ${credential}) in later replies`,
        );
      }),
    );
  },
};
