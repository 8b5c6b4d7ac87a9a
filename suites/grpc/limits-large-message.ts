// grpc.limits.large-message: a 1 MiB body, well inside gRPC's usual 4 MiB default, is served.
import { fail, pass, type CheckDefinition } from "../../harness/check.js";
import { helloReply } from "./_internals/calls.js";

export const limitsLargeMessage: CheckDefinition = {
  id: "grpc.limits.large-message",
  title: "a request with a 1 MiB body is served",
  severity: "MUST",
  area: "grpc",
  profile: "contract",
  spec: "§8 (limits not shown: gRPC's 4 MiB default assumed as the floor)",
  async run(ctx) {
    const reply = await helloReply(ctx, "x".repeat(1024 * 1024));
    if (!reply.ok) return fail(`a 1 MiB body was not served: ${reply.reason}`);
    return pass(`served; reply of ${reply.raw.length} bytes`);
  },
};
