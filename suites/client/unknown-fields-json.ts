// Over Connect's JSON codec a reply with a member the contract does not know: proto3's JSON mapping lets a parser
// reject unknown fields by default, so succeeding is only what a client SHOULD do.
import { headerValue } from "../../harness/client/recorded-request.js";
import { copesWith } from "./_internals/copes.js";
import type { ClientCheck } from "./_internals/client-check.js";
import { CONNECT } from "../../harness/protocols/connect/index.js";

export const unknownFieldsJson: ClientCheck = {
  id: "client.unknown-fields.json",
  title: "succeeds when a JSON reply carries a member it does not know (ignore unknown fields)",
  severity: "SHOULD",
  spec:
    "part 9 (client and server upgraded independently); proto3 JSON mapping (ignoring unknown fields is a parser " +
    "option)",
  scenario: "unknown-fields-json",
  judge: (run) =>
    copesWith(
      run,
      "a JSON reply carrying the unknown member addedByNewerServer",
      (r) => r.protocol === CONNECT && /^application\/json/i.test(headerValue(r, "content-type") ?? ""),
      "the client made no Hello call with Connect's JSON codec: nothing to judge",
    ),
};
