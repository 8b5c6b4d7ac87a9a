// grpc.encoding.gzip (SHOULD): a gzip-compressed request is served, or refused with UNIMPLEMENTED and
// grpc-accept-encoding.
import { gzipSync } from "node:zlib";
import { decodeMessage, encodeMessage } from "../../contract/message.js";
import { fail, pass, type CheckDefinition } from "../../harness/check.js";
import { Status } from "../../harness/protocols/rpc.js";
import { inflate } from "../../harness/targets/inflate.js";
import { MAX_INFLATED_MESSAGE_BYTES } from "../../harness/wire/bounds.js";
import { target } from "./_internals/calls.js";
import { describeRaw, rawStatus } from "./_internals/raw.js";
import { GRPC } from "../../harness/protocols/grpc/index.js";

export const encodingGzip: CheckDefinition = {
  id: "grpc.encoding.gzip",
  title: "a gzip-compressed request is served, or refused with UNIMPLEMENTED and grpc-accept-encoding (both conform)",
  severity: "SHOULD",
  area: "grpc",
  profile: "protocol",
  spec: "gRPC compression.md",
  // Built by hand for gRPC's wire rules over HTTP/2.
  protocols: [GRPC],
  async run(ctx) {
    const res = await target(ctx).raw({
      headers: { "grpc-encoding": "gzip", "grpc-accept-encoding": "identity,gzip" },
      body: [{ compressed: true, data: gzipSync(encodeMessage("compressed")) }],
    });
    const status = rawStatus(res);
    if (status === Status.UNIMPLEMENTED) {
      const accept = res.trailers["grpc-accept-encoding"] ?? res.headers["grpc-accept-encoding"];
      if (accept) return pass(`gzip refused with UNIMPLEMENTED, grpc-accept-encoding: ${accept.join(",")}`);
      return fail("gzip refused with UNIMPLEMENTED but without grpc-accept-encoding");
    }
    if (status !== Status.OK || res.frames.length !== 1) return fail(`a gzip request got ${describeRaw(res)}`);
    const frame = res.frames[0]!;
    const encoding = res.headers["grpc-encoding"]?.[0] ?? "identity";
    let payload = frame.data;
    if (frame.compressed) {
      if (encoding !== "gzip") return fail(`the reply is flagged compressed with grpc-encoding ${encoding}`);
      // Streamed and bounded: a reply of a few MB may inflate to GiBs.
      const inflated = await inflate(frame.data, "gzip", MAX_INFLATED_MESSAGE_BYTES);
      if (!inflated.ok) {
        if (inflated.reason === "too-large")
          return fail(
            `the gzip-compressed reply to a one-word message is too large: ${inflated.message}, gRPC's default ` +
              `receive limit`,
          );
        return fail("the reply is flagged gzip-compressed but does not decompress");
      }
      payload = inflated.bytes;
    }
    const decoded = decodeMessage(payload);
    if (!decoded.ok) return fail(`the reply to a gzip request does not decode: ${decoded.reason}`);
    return pass(`gzip request served (reply ${frame.compressed ? "gzip-compressed" : "uncompressed"})`);
  },
};
