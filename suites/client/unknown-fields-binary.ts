// A newer server's reply in the binary encoding carries fields this contract does not know: proto3 keeps or skips
// them, so the client must succeed (client and server are upgraded independently).
import { headerValue } from "../../harness/client/recorded-request.js";
import { copesWith } from "./_internals/copes.js";
import type { ClientCheck } from "./_internals/client-check.js";
import { CONNECT } from "../../harness/protocols/connect/index.js";

export const unknownFieldsBinary: ClientCheck = {
  id: "client.unknown-fields.binary",
  title: "succeeds when a binary reply carries fields it does not know",
  severity: "MUST",
  spec: "part 9 (client and server upgraded independently), proto3 unknown fields",
  scenario: "unknown-fields-binary",
  judge: (run) =>
    copesWith(
      run,
      "a reply carrying unknown fields 2, 5 and 1000 (binary encoding)",
      (r) => r.protocol !== CONNECT || /^application\/proto/i.test(headerValue(r, "content-type") ?? ""),
      "the client made no Hello call in the binary encoding (gRPC, gRPC-Web or Connect's proto codec): nothing " +
        "to judge",
    ),
};
