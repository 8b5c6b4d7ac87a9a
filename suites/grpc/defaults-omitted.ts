// grpc.defaults.omitted (SHOULD): a reply whose body is the empty string does not send field 1 (proto3 encoding).
import { encodeMessage, hex } from "../../common/message.js";
import { fail, pass, skip, type CheckDefinition } from "../../harness/check.js";
import { asReply, hello } from "./_internals/calls.js";

export const defaultsOmitted: CheckDefinition = {
  id: "grpc.defaults.omitted",
  title: "a reply with the default (empty) body does not put field 1 on the wire",
  severity: "SHOULD",
  area: "grpc",
  profile: "protocol",
  spec: "§2 (proto3 defaults)",
  async run(ctx) {
    // The reply's meaning is open, so only replies that happen to be empty can show this.
    for (const body of ["", "x"]) {
      const reply = asReply(await hello(ctx, encodeMessage(body)));
      if (!reply.ok || reply.message.body !== "") continue;
      if (reply.message.bodyPresent) return fail(`an empty reply body was sent on the wire (bytes ${hex(reply.raw)})`);
      return pass("the empty reply body was left off the wire");
    }
    return skip("no reply had an empty body, so there was nothing to observe");
  },
};
