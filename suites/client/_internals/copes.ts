// Checks of the form "against this legal reply the client must (or should) still succeed": the reply is the
// scenario's; the client's exit says whether it coped.
import { pass, skip, type CheckOutcome } from "../../../harness/check.js";
import type { RecordedRequest } from "../../../harness/client/recorded-request.js";
import type { ScenarioRun } from "../../../harness/client/run-scenario.js";
import { endWords, failWith, hellos, succeeded } from "./client-check.js";

/**
 * Judges a client that met `what` in the replies to the Hello calls `applies` picks: it must have exited 0. With no
 * such call there is nothing to judge (a client need not speak every protocol or codec).
 */
export function copesWith(
  run: ScenarioRun,
  what: string,
  applies: (r: RecordedRequest) => boolean,
  none: string,
): CheckOutcome {
  const met = hellos(run).filter((r) => applies(r) && r.answer.startsWith("OK"));
  const first = met[0];
  if (first === undefined) return skip(none);
  if (!succeeded(run)) return failWith(`the client ${endWords(run)} after ${what} answered`, run, first);
  return pass(`succeeded after ${met.length} reply(ies) with ${what}`);
}
