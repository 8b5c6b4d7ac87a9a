// UNAVAILABLE once, then OK: retrying is allowed (the server said it is a passing state) and not required; a retry
// SHOULD be bounded, with backoff. The bound is judged against the client's own habit: the Hello calls it makes when
// every call succeeds (the usual scenario), plus a few retries. The backoff is judged by the retry's gap, from the
// UNAVAILABLE answer's writing to the next Hello's arrival: less than MIN_BACKOFF_MS is a retry sent without a pause
// (reading the answer and sending again on loopback take about a millisecond). A pause only widens the gap, so a
// client that pauses MIN_BACKOFF_MS or more is never judged as one that does not; a loaded machine can stretch an
// unpaused retry past it, so the check can miss one (it never invents one). A jittered backoff drawn below it (gRPC's
// first retry waits random(0, initialBackoff)) is judged as none: a SHOULD finding, which does not gate.
import { pass, skip } from "../../harness/check.js";
import { failWith, hellos, type ClientCheck } from "./_internals/client-check.js";

/** Retries beyond the client's usual Hello calls that still count as bounded. */
export const MAX_RETRIES = 3;

/** A retry arriving sooner than this after the UNAVAILABLE call is taken for one sent without backoff. */
export const MIN_BACKOFF_MS = 10;

export const retryUnavailable: ClientCheck = {
  id: "client.retry.unavailable",
  title: "retries an UNAVAILABLE call, if at all, a bounded number of times and not at once (10 ms or more after the answer)",
  severity: "SHOULD",
  spec: "part 7 (5xx: a server-side error); gRPC status UNAVAILABLE (a transient condition)",
  scenario: "unavailable-once",
  async judge(run, scenarios) {
    const calls = hellos(run);
    if (calls.length === 0) return skip("the client made no Hello call: nothing to judge (client.hello.succeeds judges that)");
    const usual = hellos(await scenarios("usual")).length;
    const allowed = Math.max(usual, 1) + MAX_RETRIES;
    if (run.received > allowed && calls.length > allowed) {
      return failWith(`the client sent ${calls.length} Hello calls where it sends ${usual} when all succeed: more than ${MAX_RETRIES} retries after one UNAVAILABLE is not bounded`, run, calls[allowed]);
    }
    const retried = calls.length > usual;
    const [refused, next] = calls;
    const gap = refused !== undefined && next !== undefined ? next.atMs - (refused.answeredAtMs ?? refused.atMs) : undefined;
    if (retried && gap !== undefined && gap < MIN_BACKOFF_MS) {
      return failWith(`the client retried ${gap} ms after its Hello call was answered UNAVAILABLE (measured from the answer's writing to the retry's arrival): a retry SHOULD back off (less than ${MIN_BACKOFF_MS} ms is no pause at all)`, run, next);
    }
    return pass(retried ? `retried after UNAVAILABLE (${calls.length} Hello calls, the retry ${gap} ms after the UNAVAILABLE answer)` : `did not retry after UNAVAILABLE (${calls.length} Hello call(s)): allowed`);
  },
};
