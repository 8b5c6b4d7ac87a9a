// grpc.limits.over-limit (SHOULD): a request past the server's receive limit gets RESOURCE_EXHAUSTED, not a crash.
import { encodeMessage } from "../../harness/_internals/message.js";
import { fail, pass, skip, type CheckDefinition } from "../../harness/check.js";
import { Status } from "../../harness/targets/grpc-target.js";
import { target } from "./_internals/calls.js";
import { describeRaw, rawStatus } from "./_internals/raw.js";
import { stillServing } from "./_internals/still-serving.js";

const SIZE = 5 * 1024 * 1024;

export const limitsOverLimit: CheckDefinition = {
  id: "grpc.limits.over-limit",
  title: "a 5 MiB request (past gRPC's usual 4 MiB limit) gets RESOURCE_EXHAUSTED, or is served; never a crash or reset",
  severity: "SHOULD",
  area: "grpc",
  profile: "protocol",
  spec: "§8, gRPC statuscodes.md (RESOURCE_EXHAUSTED)",
  async run(ctx) {
    const res = await target(ctx).raw({ body: [{ compressed: false, data: encodeMessage("x".repeat(SIZE)) }] });
    const status = rawStatus(res);
    const serving = await stillServing(ctx);
    if (serving) return fail(serving);
    if (status === Status.RESOURCE_EXHAUSTED) return pass("RESOURCE_EXHAUSTED");
    if (status === Status.OK && res.frames.length === 1) return skip("the server accepted 5 MiB: its limit is higher than this check can probe");
    return fail(`a 5 MiB request got ${describeRaw(res)}, not RESOURCE_EXHAUSTED`);
  },
};
