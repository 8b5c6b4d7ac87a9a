// grpc.unary.cardinality (SHOULD): zero or two request messages on a unary call get UNIMPLEMENTED.
import { encodeMessage } from "../../common/message.js";
import { fail, pass, type CheckDefinition } from "../../harness/check.js";
import { Status } from "../../harness/protocols/rpc.js";
import { target } from "./_internals/calls.js";
import { describeRaw, rawStatus } from "./_internals/raw.js";
import { GRPC } from "../../harness/protocols/grpc/index.js";

export const unaryCardinality: CheckDefinition = {
  id: "grpc.unary.cardinality",
  title: "a unary call carrying zero or two request messages gets UNIMPLEMENTED",
  severity: "SHOULD",
  area: "grpc",
  profile: "protocol",
  spec: "§4.1 (one request), gRPC statuscodes.md (cardinality violation: UNIMPLEMENTED)",
  // Built by hand for gRPC's wire rules over HTTP/2.
  protocols: [GRPC],
  async run(ctx) {
    const message = { compressed: false, data: encodeMessage("one of two") };
    const zero = await target(ctx).raw({ body: [] });
    const two = await target(ctx).raw({ body: [message, message] });
    const problems: string[] = [];
    if (rawStatus(zero) !== Status.UNIMPLEMENTED) problems.push(`zero messages got ${describeRaw(zero)}`);
    if (rawStatus(two) !== Status.UNIMPLEMENTED) problems.push(`two messages got ${describeRaw(two)}`);
    if (problems.length > 0) return fail(`${problems.join("; ")}; expected 12 UNIMPLEMENTED`);
    return pass("zero and two messages both got UNIMPLEMENTED");
  },
};
