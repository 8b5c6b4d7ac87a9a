// The run's HTTP settings as the session resolved them, every default filled in once per run (harness/session.ts):
// the checks read them and never fill a default again.
import type { CheckContext } from "../../../harness/check.js";
import type { HttpConfig } from "../../../harness/targets/http-target.js";

/** Dynamic probes run on the collections the user named; past this many, the rest are left out (and said so). */
export const MAX_PROBED_COLLECTIONS = 5;

/** The run's settings; an HTTP target never comes without them. */
export function configOf(ctx: CheckContext): HttpConfig {
  if (ctx.httpConfig === undefined)
    throw new Error("an HTTP target came without the run's settings (CheckContext.httpConfig)");
  return ctx.httpConfig;
}
