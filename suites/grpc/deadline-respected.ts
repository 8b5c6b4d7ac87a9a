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
    const bound = DEADLINE_MS + SLACK_MS;
    const withDeadline = { headers: { "grpc-timeout": `${DEADLINE_MS}m` }, body, timeoutMs: bound };
    /** One call and the milliseconds it took. */
    const timed = async (request: Parameters<ReturnType<typeof target>["raw"]>[0]) => {
      const started = performance.now();
      const res = await target(ctx).raw(request);
      return { res, ms: Math.round(performance.now() - started) };
    };
    const first = await timed(withDeadline);
    if (first.res.failure?.kind !== "timeout") return judged(first.res, first.ms, "");
    // No status in time, twice (the guard sent it again): the server ignored the deadline, or this machine or the
    // target is too slow right now to tell. The same request without a deadline says which.
    const plain = await timed({ body, timeoutMs: bound });
    if (plain.res.failure !== undefined || plain.ms > SLACK_MS / 2) {
      return skip(
        `no status within ${bound} ms of a ${DEADLINE_MS} ms deadline, but the same call without one took ` +
          `${plain.ms} ms (${describeRaw(plain.res)}): too slow now to tell a deadline's effect`,
      );
    }
    // Answered at once without a deadline: the call with one is asked again, now that the target is seen answering,
    // so that a moment's pause of this machine or the target (both tries fell in it) is no failure.
    const again = await timed(withDeadline);
    if (again.res.failure?.kind === "timeout")
      return fail(
        `no status within ${bound} ms of a ${DEADLINE_MS} ms deadline, twice, while the same call without one was ` +
          `answered in ${plain.ms} ms between them`,
      );
    return judged(
      again.res,
      again.ms,
      ` (an earlier try got no status within ${bound} ms, while the same call without a deadline was answered in ` +
        `${plain.ms} ms: read as a pause, since this one ended in time)`,
    );
  },
};

/** A call with the deadline that ended in time: a reply or DEADLINE_EXCEEDED passes, any other status fails. */
function judged(res: RawResponse, took: number, note: string) {
  const status = rawStatus(res);
  if (status === 0 || status === 4) return pass(`ended in ${took} ms with ${describeRaw(res)}${note}`);
  return fail(`the call ended with ${describeRaw(res)}, neither a reply nor DEADLINE_EXCEEDED${note}`);
}
