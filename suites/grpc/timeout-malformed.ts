// grpc.timeout.malformed (SHOULD): a malformed grpc-timeout never crashes the server.
import { encodeMessage } from "../../common/message.js";
import { fail, pass, type CheckDefinition } from "../../harness/check.js";
import { target } from "./_internals/calls.js";
import { describeRaw } from "./_internals/raw.js";
import { stillServing } from "./_internals/still-serving.js";
import { GRPC } from "../../harness/protocols/grpc/index.js";

/** Not Timeout = TimeoutValue TimeoutUnit with at most 8 digits and a unit of H M S m u n. */
const MALFORMED_TIMEOUTS = ["abc", "123456789S", "-1S", "10x", "S", ""];

export const timeoutMalformed: CheckDefinition = {
  id: "grpc.timeout.malformed",
  title: "malformed grpc-timeout values get an answer (any status or a stream error) and the server keeps serving",
  severity: "SHOULD",
  area: "grpc",
  profile: "protocol",
  spec: "gRPC PROTOCOL-HTTP2.md (Timeout)",
  // Built by hand for gRPC's wire rules over HTTP/2.
  protocols: [GRPC],
  async run(ctx) {
    const problems: string[] = [];
    for (const value of MALFORMED_TIMEOUTS) {
      const res = await target(ctx).raw({
        headers: { "grpc-timeout": value },
        body: [{ compressed: false, data: encodeMessage("timeout") }],
      });
      if (res.failure?.kind === "timeout" || res.failure?.kind === "connection") {
        problems.push(`grpc-timeout ${JSON.stringify(value)}: ${describeRaw(res)}`);
      }
    }
    const serving = await stillServing(ctx);
    if (serving) problems.push(serving);
    if (problems.length > 0) return fail(problems.join("; "));
    return pass(`${MALFORMED_TIMEOUTS.length} malformed values answered; still serving`);
  },
};
