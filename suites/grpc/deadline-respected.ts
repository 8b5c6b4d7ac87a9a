// grpc.deadline.respected (SHOULD): a call with a short grpc-timeout ends by it (a reply or DEADLINE_EXCEEDED).
import { encodeMessage } from "../../common/message.js";
import { fail, pass, skip, type CheckDefinition } from "../../harness/check.js";
import { target } from "./_internals/calls.js";
import { describeRaw, rawStatus } from "./_internals/raw.js";
import { GRPC } from "../../harness/protocols/grpc/index.js";
import type { RawResponse } from "../../harness/protocols/rpc.js";

const DEADLINE_MS = 200;
/** Scheduling and loopback latency allowed past the deadline before the call counts as hanging. */
const SLACK_MS = 1500;

export const deadlineRespected: CheckDefinition = {
  id: "grpc.deadline.respected",
  title:
    `a call with grpc-timeout ${DEADLINE_MS}m ends within the deadline (a reply or DEADLINE_EXCEEDED), ` +
    "never hangs",
  severity: "SHOULD",
  area: "grpc",
  profile: "protocol",
  spec: "gRPC PROTOCOL-HTTP2.md (Timeout)",
  // Built by hand for gRPC's wire rules over HTTP/2.
  protocols: [GRPC],
  async run(ctx) {
    const body = [{ compressed: false, data: encodeMessage("deadline") }];
    const started = performance.now();
    const res = await target(ctx).raw({
      headers: { "grpc-timeout": `${DEADLINE_MS}m` },
      body,
      timeoutMs: DEADLINE_MS + SLACK_MS,
    });
    const took = Math.round(performance.now() - started);
    if (res.failure?.kind === "timeout") {
      // No status in time, twice (the guard sent it again): the server ignored the deadline, or this machine or the
      // target is too slow right now to tell. The same request without a deadline says which.
      const plainStarted = performance.now();
      const plain = await target(ctx).raw({ body, timeoutMs: DEADLINE_MS + SLACK_MS });
      const plainMs = Math.round(performance.now() - plainStarted);
      if (plain.failure !== undefined || plainMs > SLACK_MS / 2) {
        return skip(
          `no status within ${DEADLINE_MS + SLACK_MS} ms of a ${DEADLINE_MS} ms deadline, but the same call ` +
            `without one took ${plainMs} ms (${describeRaw(plain)}): too slow now to tell a deadline's effect`,
        );
      }
      // Answered at once without a deadline: the call with one is asked again, now that the target is seen
      // answering, so that a moment's pause of this machine or the target (both tries fell in it) is no failure.
      const againStarted = performance.now();
      const again = await target(ctx).raw({
        headers: { "grpc-timeout": `${DEADLINE_MS}m` },
        body,
        timeoutMs: DEADLINE_MS + SLACK_MS,
      });
      if (again.failure?.kind === "timeout")
        return fail(
          `no status within ${DEADLINE_MS + SLACK_MS} ms of a ${DEADLINE_MS} ms deadline, twice, while the same ` +
            `call without one was answered in ${plainMs} ms between them`,
        );
      return judged(
        again,
        Math.round(performance.now() - againStarted),
        ` (an earlier try got no status within ${DEADLINE_MS + SLACK_MS} ms, while the same call without a deadline ` +
          `was answered in ${plainMs} ms: read as a pause, since this one ended in time)`,
      );
    }
    return judged(res, took, "");
  },
};

/** A call with the deadline that ended in time: a reply or DEADLINE_EXCEEDED passes, any other status fails. */
function judged(res: RawResponse, took: number, note: string) {
  const status = rawStatus(res);
  if (status === 0 || status === 4) return pass(`ended in ${took} ms with ${describeRaw(res)}${note}`);
  return fail(`the call ended with ${describeRaw(res)}, neither a reply nor DEADLINE_EXCEEDED${note}`);
}
