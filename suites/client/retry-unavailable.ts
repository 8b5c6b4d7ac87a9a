// UNAVAILABLE once, then OK: retrying is allowed (the server said it is a passing state) and not required; a retry
// SHOULD be bounded, with backoff. The bound is judged against the client's own habit: the Hello calls it makes when
// every call succeeds (the usual scenario), plus a few retries. The backoff is not judged: the one retry this
// scenario asks for cannot tell a client that does not pause from one whose backoff is jittered (gRPC's first retry
// waits random(0, initialBackoff), so a correct client retries within a few milliseconds in some runs). The retry's
// gap, from the UNAVAILABLE answer's writing to the retry's arrival, is said in the message, never judged.
import { pass, skip } from "../../harness/check.js";
import { failWith, hellos, NO_HELLO, type ClientCheck } from "./_internals/client-check.js";

/** Retries beyond the client's usual Hello calls that still count as bounded. */
export const MAX_RETRIES = 3;

export const retryUnavailable: ClientCheck = {
  id: "client.retry.unavailable",
  title: "retries an UNAVAILABLE call, if at all, a bounded number of times",
  severity: "SHOULD",
  spec: "part 7 (5xx: a server-side error); gRPC status UNAVAILABLE (a transient condition)",
  scenario: "unavailable-once",
  async judge(run, scenarios) {
    const calls = hellos(run);
    if (calls.length === 0) return skip(NO_HELLO);
    const usual = hellos(await scenarios("usual")).length;
    const allowed = Math.max(usual, 1) + MAX_RETRIES;
    if (run.received > allowed && calls.length > allowed) {
      return failWith(
        `the client sent ${calls.length} Hello calls where it sends ${usual} when all succeed: more than ` +
          `${MAX_RETRIES} retries after one UNAVAILABLE is not bounded`,
        run,
        calls[allowed],
      );
    }
    const retried = calls.length > usual;
    const [refused, next] = calls;
    const gap =
      refused !== undefined && next !== undefined ? next.atMs - (refused.answeredAtMs ?? refused.atMs) : undefined;
    return pass(
      retried
        ? `retried after UNAVAILABLE (${calls.length} Hello calls, the retry ${gap} ms after the UNAVAILABLE answer)`
        : `did not retry after UNAVAILABLE (${calls.length} Hello call(s)): allowed`,
    );
  },
};
