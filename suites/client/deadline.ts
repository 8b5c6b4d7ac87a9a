// A client SHOULD bound its wait with a deadline its protocol carries (grpc-timeout; Connect's connect-timeout-ms), so
// that a slow server can stop working for it: the scenario holds the first reply past a reasonable deadline.
import { pass, skip } from "../../harness/check.js";
import { headerValue } from "../../harness/client/recorded-request.js";
import { failWith, hellos, NO_HELLO, type ClientCheck } from "./_internals/client-check.js";

const DEADLINE_HEADER = { grpc: "grpc-timeout", "grpc-web": "grpc-timeout", connect: "connect-timeout-ms", http: "" } as const;

export const deadline: ClientCheck = {
  id: "client.deadline",
  title: "sets a deadline on each Hello (grpc-timeout, or connect-timeout-ms over Connect)",
  severity: "SHOULD",
  spec: "part 8 (time-outs: not shown, so the client bounds its own wait)",
  scenario: "slow-first",
  judge(run) {
    const calls = hellos(run);
    if (calls.length === 0) return skip(NO_HELLO);
    const without = calls.find((r) => headerValue(r, DEADLINE_HEADER[r.protocol]) === undefined);
    if (without !== undefined) return failWith(`the Hello call carries no deadline (${DEADLINE_HEADER[without.protocol]} absent), so a slow server holds the client as long as it likes`, run, without);
    const first = calls[0] as (typeof calls)[number];
    return pass(`each of ${calls.length} Hello call(s) carried a deadline (the first: ${DEADLINE_HEADER[first.protocol]} ${headerValue(first, DEADLINE_HEADER[first.protocol])})`);
  },
};
