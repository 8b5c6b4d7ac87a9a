// grpc.errors.malformed-request: bytes that are not a Message get a non-OK status, and the server keeps serving.
import { hex } from "../../contract/message.js";
import { fail, pass, type CheckDefinition } from "../../harness/check.js";

import { target } from "./_internals/calls.js";
import { describeRaw, rawStatus } from "./_internals/raw.js";
import { stillServing } from "./_internals/still-serving.js";
import { GRPC } from "../../harness/protocols/grpc/index.js";

/** Each is malformed in a way every conforming protobuf decoder must notice. */
export const MALFORMED = [
  { what: "a string field whose length runs past the end", bytes: [0x0a, 0x05, 0x61] },
  { what: "a tag with no value", bytes: [0x08] },
  { what: "a varint that never ends", bytes: [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff] },
  { what: "field number 0", bytes: [0x02, 0x01, 0x61] },
];

export const errorsMalformedRequest: CheckDefinition = {
  id: "grpc.errors.malformed-request",
  title:
    "a request that is not a valid Message gets a non-OK status (not OK, a hang or a reset) and the server keeps " +
    "serving",
  severity: "MUST",
  area: "grpc",
  profile: "protocol",
  spec: "§7, gRPC PROTOCOL-HTTP2.md",
  // Built by hand for gRPC's wire rules over HTTP/2.
  protocols: [GRPC],
  async run(ctx) {
    const problems: string[] = [];
    for (const m of MALFORMED) {
      const res = await target(ctx).raw({ body: [{ compressed: false, data: new Uint8Array(m.bytes) }] });
      const status = rawStatus(res);
      if (status === undefined || status === 0 || res.failure) {
        problems.push(`${m.what} (bytes ${hex(new Uint8Array(m.bytes))}): ${status === 0 ? "OK" : describeRaw(res)}`);
      }
    }
    const serving = await stillServing(ctx);
    if (serving) problems.push(serving);
    if (problems.length > 0) return fail(problems.join("; "));
    return pass(`${MALFORMED.length} malformed requests refused with a status; still serving`);
  },
};
