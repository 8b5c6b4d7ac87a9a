// grpc.metadata.accepted: custom ASCII and binary (-bin) metadata do not cause an error.
import { fail, pass, type CheckDefinition } from "../../harness/check.js";
import { helloReply } from "./_internals/calls.js";

export const metadataAccepted: CheckDefinition = {
  id: "grpc.metadata.accepted",
  title: "custom ASCII and -bin metadata on a call do not cause an error",
  severity: "MUST",
  area: "grpc",
  profile: "contract",
  spec: "§5 (credentials travel with each request), gRPC PROTOCOL-HTTP2.md (Custom-Metadata)",
  async run(ctx) {
    const reply = await helloReply(ctx, "with metadata", {
      metadata: {
        "x-conformance-note": "plain ascii value",
        "x-conformance-blob-bin": new Uint8Array([0, 1, 2, 254, 255]),
      },
    });
    if (!reply.ok) return fail(`a call with custom metadata failed: ${reply.reason}`);
    return pass("served with custom ASCII and binary metadata");
  },
};
