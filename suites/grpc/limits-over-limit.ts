// grpc.limits.over-limit (SHOULD): a request past the target's own receive limit gets RESOURCE_EXHAUSTED, not a
// reset or a crash.
import { encodeMessage } from "../../contract/message.js";
import { fail, pass, skip, type CheckDefinition } from "../../harness/check.js";
import { Status } from "../../harness/protocols/rpc.js";
import { target } from "./_internals/calls.js";
import { describeRaw, rawStatus } from "./_internals/raw.js";
import { PROBE_BOUND, receiveLimit, sizeText } from "./_internals/receive-limit.js";
import { stillServing } from "./_internals/still-serving.js";
import { GRPC } from "../../harness/protocols/grpc/index.js";

export const limitsOverLimit: CheckDefinition = {
  id: "grpc.limits.over-limit",
  title:
    "a request past the target's receive limit (probed up to 4 MiB) gets RESOURCE_EXHAUSTED; never a crash or a reset",
  severity: "SHOULD",
  area: "grpc",
  profile: "protocol",
  spec: "§8, gRPC statuscodes.md (RESOURCE_EXHAUSTED)",
  // Built by hand for gRPC's wire rules over HTTP/2.
  protocols: [GRPC],
  async run(ctx) {
    const send = (size: number) =>
      target(ctx).raw({ body: [{ compressed: false, data: encodeMessage("x".repeat(size)) }], refusalJudged: true });
    // gRPC's usual limit is the bound itself: a body of the bound's size is sent beside the probe, and its answer
    // used when the probe finds the limit there, so that a slow link carries the largest body once, not twice.
    const atBound = send(PROBE_BOUND);
    atBound.catch(() => undefined);
    const limit = await receiveLimit(ctx);
    // Over the limit found; with none found up to the bound, past the bound (where gRPC's default limit lies).
    const size = limit.firstRefused?.size ?? PROBE_BOUND + 1024 * 1024;
    if (limit.largestServed === 0) return skip(`no body was served, so no limit can be told apart (${limit.summary})`);
    const first = limit.firstRefused;
    if (!first && limit.unanswered.length > 0)
      return skip(`no limit seen, and some sizes got no answer in time, so none is known to pass: ${limit.summary}`);
    if (first && limit.answers.some((a) => a.served && a.size > first.size)) {
      return skip(
        `the refusal at ${sizeText(first.size)} is no limit, since larger bodies were served ` +
          `(grpc.limits.large-message reports it)`,
      );
    }
    const res = size === PROBE_BOUND ? await atBound : (await atBound.catch(() => undefined), await send(size));
    const status = rawStatus(res);
    const serving = await stillServing(ctx);
    if (serving) return fail(`after a ${sizeText(size)} request (${describeRaw(res)}): ${serving}`);
    if (status === Status.RESOURCE_EXHAUSTED) return pass(`RESOURCE_EXHAUSTED for ${sizeText(size)}; ${limit.summary}`);
    if (status === Status.OK && res.frames.length === 1)
      return skip(`the server accepted ${sizeText(size)}: its limit is higher than this check can probe`);
    return fail(
      `a ${sizeText(size)} request, past the target's limit (${limit.summary}), got ${describeRaw(res)}, not ` +
        `RESOURCE_EXHAUSTED`,
    );
  },
};
