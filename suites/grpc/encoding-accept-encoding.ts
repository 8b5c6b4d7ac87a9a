// grpc.encoding.accept-encoding (SHOULD): refusing an unknown encoding, grpc-accept-encoding lists what is supported.
import { fail, pass, skip, type CheckDefinition } from "../../harness/check.js";
import { Status } from "../../harness/protocols/rpc.js";
import { rawStatus } from "./_internals/raw.js";
import { sendUnknownEncoding, UNKNOWN_ENCODING } from "./_internals/unknown-encoding.js";
import { GRPC } from "../../harness/protocols/grpc/index.js";

export const encodingAcceptEncoding: CheckDefinition = {
  id: "grpc.encoding.accept-encoding",
  title: "the refusal of an unknown encoding carries grpc-accept-encoding, which does not list it",
  severity: "SHOULD",
  area: "grpc",
  profile: "protocol",
  spec: "gRPC compression.md",
  // Built by hand for gRPC's wire rules over HTTP/2.
  protocols: [GRPC],
  async run(ctx) {
    const res = await sendUnknownEncoding(ctx);
    if (rawStatus(res) !== Status.UNIMPLEMENTED)
      return skip("the unknown encoding was not refused (see grpc.encoding.unsupported)");
    const accept = (res.trailers["grpc-accept-encoding"] ?? res.headers["grpc-accept-encoding"] ?? []).join(",");
    if (accept === "") return fail("no grpc-accept-encoding with the refusal");
    const listed = accept.split(",").map((s) => s.trim());
    if (listed.includes(UNKNOWN_ENCODING)) return fail(`grpc-accept-encoding lists the encoding it refused: ${accept}`);
    return pass(`grpc-accept-encoding: ${accept}`);
  },
};
