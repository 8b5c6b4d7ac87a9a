// After a hostile request: does the server still answer an ordinary Hello on a new connection?
import type { CheckContext } from "../../../harness/check.js";
import { helloReply } from "./calls.js";

export async function stillServing(ctx: CheckContext): Promise<string | undefined> {
  const reply = await helloReply(ctx, "still there?", { channel: "fresh" });
  return reply.ok ? undefined : `the server no longer serves Hello afterwards: ${reply.reason}`;
}
