// grpc.metadata.bin-base64: -bin values are accepted base64-encoded both with and without padding.
import { encodeMessage } from "../../contract/message.js";
import { fail, pass, type CheckDefinition } from "../../harness/check.js";
import { target } from "./_internals/calls.js";
import { describeRaw, rawStatus } from "./_internals/raw.js";
import { GRPC } from "../../harness/protocols/grpc/index.js";

export const metadataBinBase64: CheckDefinition = {
  id: "grpc.metadata.bin-base64",
  title: "a -bin header is accepted base64-encoded with padding and without",
  severity: "MUST",
  area: "grpc",
  profile: "protocol",
  spec: "gRPC PROTOCOL-HTTP2.md (Binary-Header: implementations MUST accept padded and un-padded values)",
  // Built by hand for gRPC's wire rules over HTTP/2.
  protocols: [GRPC],
  async run(ctx) {
    const problems: string[] = [];
    for (const [form, value] of [
      ["padded", "AAEC/w=="],
      ["unpadded", "AAEC/w"],
    ] as const) {
      const res = await target(ctx).raw({
        headers: { "x-conformance-blob-bin": value },
        body: [{ compressed: false, data: encodeMessage("bin") }],
      });
      if (rawStatus(res) !== 0 || res.frames.length !== 1) problems.push(`${form} ${value}: ${describeRaw(res)}`);
    }
    if (problems.length > 0) return fail(problems.join("; "));
    return pass("padded and unpadded base64 both accepted");
  },
};
