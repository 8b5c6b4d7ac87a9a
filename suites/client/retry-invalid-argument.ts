// INVALID_ARGUMENT (HTTP 400 over Connect) says the request was wrong (part 7: 4xx): sending it again cannot help,
// so it MUST NOT be retried in a loop. The client's usual Hello calls (all succeeding) plus one are allowed.
import { pass, skip } from "../../harness/check.js";
import { failWith, hellos, NO_HELLO, type ClientCheck } from "./_internals/client-check.js";

export const retryInvalidArgument: ClientCheck = {
  id: "client.retry.invalid-argument",
  title: "does not retry an INVALID_ARGUMENT call in a loop",
  severity: "MUST",
  spec: "part 7 (4xx: the client's request was wrong)",
  scenario: "invalid-argument",
  async judge(run, scenarios) {
    const calls = hellos(run);
    if (calls.length === 0) return skip(NO_HELLO);
    const usual = hellos(await scenarios("usual")).length;
    const allowed = Math.max(usual, 1) + 1;
    if (calls.length > allowed) {
      return failWith(
        `the client sent ${calls.length} Hello calls, each refused INVALID_ARGUMENT, where it sends ${usual} ` +
          `when all succeed: it retries a wrong request in a loop`,
        run,
        calls[allowed],
      );
    }
    return pass(`${calls.length} Hello call(s) refused INVALID_ARGUMENT, none retried in a loop`);
  },
};
