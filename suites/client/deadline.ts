// A client SHOULD bound its wait with a deadline its protocol carries (grpc-timeout; Connect's connect-timeout-ms), so
// that a slow server can stop working for it: the scenario holds the first reply past a reasonable deadline.
import { pass, skip } from "../../harness/check.js";
import { headerValue, type RecordedRequest } from "../../harness/client/recorded-request.js";
import { protocolModule } from "../../harness/protocols/index.js";
import { failWith, hellos, NO_HELLO, type ClientCheck } from "./_internals/client-check.js";

/** The header that carries a call's deadline in its protocol, as the protocol's module names it. */
const deadlineHeader = (r: RecordedRequest): string => protocolModule(r.protocol)?.recording?.deadlineHeader ?? "";

export const deadline: ClientCheck = {
  id: "client.deadline",
  title: "sets a deadline on each Hello (grpc-timeout, or connect-timeout-ms over Connect)",
  severity: "SHOULD",
  spec: "part 8 (time-outs: not shown, so the client bounds its own wait)",
  scenario: "slow-first",
  judge(run) {
    const calls = hellos(run);
    if (calls.length === 0) return skip(NO_HELLO);
    const without = calls.find((r) => headerValue(r, deadlineHeader(r)) === undefined);
    if (without !== undefined)
      return failWith(
        `the Hello call carries no deadline (${deadlineHeader(without)} absent), so a slow server holds the ` +
          `client as long as it likes`,
        run,
        without,
      );
    const first = calls[0] as (typeof calls)[number];
    return pass(
      `each of ${calls.length} Hello call(s) carried a deadline (the first: ${deadlineHeader(first)} ` +
        `${headerValue(first, deadlineHeader(first))})`,
    );
  },
};
