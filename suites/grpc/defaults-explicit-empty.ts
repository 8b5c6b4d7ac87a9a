// grpc.defaults.explicit-empty: body present on the wire with the empty string means the same as body absent.
import { fail, pass, type CheckDefinition } from "../../harness/check.js";
import { asReply, hello, show } from "./_internals/calls.js";
import { compareReplies } from "./_internals/variation.js";

export const defaultsExplicitEmpty: CheckDefinition = {
  id: "grpc.defaults.explicit-empty",
  title: 'body sent explicitly as "" (bytes 0a 00) gets the same reply as body absent',
  severity: "MUST",
  area: "grpc",
  profile: "contract",
  spec: "§2 (proto3 defaults)",
  async run(ctx) {
    const absent = asReply(await hello(ctx, new Uint8Array(), { channel: "fresh" }));
    const explicit = asReply(await hello(ctx, new Uint8Array([0x0a, 0x00]), { channel: "fresh" }));
    if (!explicit.ok)
      return fail(`the explicit empty body was not served: ${explicit.reason}`, { details: ["request bytes: 0a 00"] });
    if (!absent.ok) return fail(`the empty request was not served: ${absent.reason}`);
    const same = await compareReplies(ctx, absent.message.body, explicit.message.body);
    if (same.verdict === "same") return pass(`both got ${show(absent.message.body)}${same.note}`);
    if (same.verdict === "not-compared") return pass(`both served; ${same.note}`);
    return fail(
      `absent body got ${show(absent.message.body)} but explicit "" got ${show(explicit.message.body)}: proto3 ` +
        `gives them one meaning`,
      {
        details: ["request bytes: (none) vs 0a 00"],
      },
    );
  },
};
