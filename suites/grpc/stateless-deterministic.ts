// grpc.stateless.deterministic (SHOULD): the same request in a fresh context gets the same reply.
import { fail, pass, skip, type CheckDefinition } from "../../harness/check.js";
import { variationProfile } from "./_internals/variation.js";

export const statelessDeterministic: CheckDefinition = {
  id: "grpc.stateless.deterministic",
  title: "the same request on fresh connections gets the same reply (a reply that varies by itself is reported)",
  severity: "SHOULD",
  area: "grpc",
  profile: "contract",
  spec: "§1.2 (stateless server)",
  // Compares replies over time: data other checks store may legally change a reply, so only the other history
  // checks run beside it, each with bodies of its own (harness/check.ts, Sharing).
  sharing: "history",
  async run(ctx) {
    const profile = await variationProfile(ctx);
    if (!profile.compared) return skip(profile.evidence);
    if (profile.kind === "history")
      return fail(
        `the same request got different replies on fresh connections because of earlier calls: ${profile.evidence}`,
      );
    return profile.deterministic ? pass(profile.evidence) : fail(profile.evidence);
  },
};
