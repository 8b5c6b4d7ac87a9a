// After a hostile request: does the server still answer an ordinary Hello on a new connection?
import type { CheckContext } from "../../../harness/check.js";
import { helloReply } from "./calls.js";

/** Undefined when it does; else what one Hello on a new connection got, and no more than that is claimed. */
export async function stillServing(ctx: CheckContext): Promise<string | undefined> {
  const reply = await helloReply(ctx, "still there?", { channel: "fresh" });
  return reply.ok ? undefined : `an ordinary Hello on a new connection afterwards was not served: ${reply.reason}`;
}
