// grpc.http.content-type (SHOULD): a request whose content-type is not gRPC gets HTTP 415.
import { encodeFrames } from "../../harness/protocols/grpc/index.js";
import { encodeMessage } from "../../common/message.js";
import { fail, pass, type CheckDefinition } from "../../harness/check.js";
import { target } from "./_internals/calls.js";
import { describeRaw } from "./_internals/raw.js";
import { stillServing } from "./_internals/still-serving.js";
import { GRPC } from "../../harness/protocols/grpc/index.js";

export const httpContentType: CheckDefinition = {
  id: "grpc.http.content-type",
  title: "a request with content-type text/plain gets HTTP 415 Unsupported Media Type",
  severity: "SHOULD",
  area: "grpc",
  profile: "protocol",
  spec: "gRPC PROTOCOL-HTTP2.md (a non-gRPC content-type: HTTP 415)",
  // Built by hand for gRPC's wire rules over HTTP/2.
  protocols: [GRPC],
  async run(ctx) {
    const res = await target(ctx).raw({
      headers: { "content-type": "text/plain" },
      body: encodeFrames([{ compressed: false, data: encodeMessage("plain") }]),
    });
    const serving = await stillServing(ctx);
    if (serving) return fail(serving);
    if (res.httpStatus === 415) return pass("HTTP 415");
    return fail(`content-type text/plain got ${describeRaw(res)}, not HTTP 415`);
  },
};
