// grpc.defaults.decodes: every reply decodes as Message: field 1 length-delimited, valid UTF-8.
import { encodeMessage, hex } from "../../contract/message.js";
import { fail, pass, type CheckDefinition } from "../../harness/check.js";
import { asReply, hello, show } from "./_internals/calls.js";

const BODIES = ["", "hello", "Grüße, 世界 🌍", "a".repeat(1000)];

export const defaultsDecodes: CheckDefinition = {
  id: "grpc.defaults.decodes",
  title: "every reply decodes strictly as Message (field 1 length-delimited, valid UTF-8)",
  severity: "MUST",
  area: "grpc",
  profile: "contract",
  spec: "§2, §4.1",
  async run(ctx) {
    for (const body of BODIES) {
      const reply = asReply(await hello(ctx, encodeMessage(body)));
      if (!reply.ok)
        return fail(`request ${show(body)}: ${reply.reason}`, {
          details: [`request bytes: ${hex(encodeMessage(body))}`],
        });
    }
    return pass(`${BODIES.length} replies decoded`);
  },
};
