// The empty Message (body "", sent as no bytes at all in the binary encoding, {} in JSON) is a legal reply.
import { copesWith } from "./_internals/copes.js";
import { NO_HELLO, type ClientCheck } from "./_internals/client-check.js";

export const emptyReply: ClientCheck = {
  id: "client.empty-reply",
  title: "succeeds when the reply is the empty Message (body the proto3 default)",
  severity: "MUST",
  spec: "part 2 (body: proto3 semantics, optional, defaults to the empty string)",
  scenario: "empty-reply",
  judge: (run) => copesWith(run, 'the empty Message (body "")', () => true, NO_HELLO),
};
