// grpc.defaults.empty-request: an empty Message (zero bytes, every field at its default) gets OK and one Message.
import { fail, pass, type CheckDefinition } from "../../harness/check.js";
import { asReply, hello, show } from "./_internals/calls.js";

export const defaultsEmptyRequest: CheckDefinition = {
  id: "grpc.defaults.empty-request",
  title: "an empty request (zero bytes: body at its proto3 default) gets OK and one Message",
  severity: "MUST",
  area: "grpc",
  profile: "contract",
  spec: "§2 (proto3 defaults)",
  async run(ctx) {
    const reply = asReply(await hello(ctx, new Uint8Array()));
    if (!reply.ok) return fail(`the empty request was not served: ${reply.reason}`, { details: ["request bytes: (none)"] });
    return pass(`OK, reply body ${show(reply.message.body)}`);
  },
};
