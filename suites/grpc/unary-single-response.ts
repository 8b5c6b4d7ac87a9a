// grpc.unary.single-response: a unary call gets exactly one response message, then trailers with grpc-status 0.
import { encodeMessage } from "../../contract/message.js";
import { fail, pass, type CheckDefinition } from "../../harness/check.js";
import { isGrpcReply } from "../../harness/protocols/rpc.js";
import { target } from "./_internals/calls.js";
import { describeRaw, rawStatus } from "./_internals/raw.js";
import { GRPC } from "../../harness/protocols/grpc/index.js";

const GRPC_CONTENT_TYPE = /^application\/grpc(\+proto)?(;.*)?$/i;

export const unarySingleResponse: CheckDefinition = {
  id: "grpc.unary.single-response",
  title: "one request gets one response message, then trailers with grpc-status 0 and a gRPC content-type",
  severity: "MUST",
  area: "grpc",
  profile: "contract",
  spec: "§4.1 (one request, one response)",
  // Built by hand for gRPC's wire rules over HTTP/2.
  protocols: [GRPC],
  async run(ctx) {
    const res = await target(ctx).raw({ body: [{ compressed: false, data: encodeMessage("single") }] });
    const problems: string[] = [];
    if (res.failure) problems.push(describeRaw(res));
    if (res.httpStatus !== 200) problems.push(`HTTP status ${res.httpStatus ?? "none"}, not 200`);
    const contentType = res.headers["content-type"]?.[0] ?? "";
    if (!GRPC_CONTENT_TYPE.test(contentType))
      problems.push(`content-type ${JSON.stringify(contentType)} is not application/grpc[+proto]`);
    if (res.frames.length !== 1) problems.push(`${res.frames.length} response messages, not 1`);
    if (res.leftover > 0)
      problems.push(
        isGrpcReply(res.httpStatus, res.headers)
          ? `${res.leftover} bytes of a truncated message`
          : `a body of ${res.leftover} bytes that is not gRPC`,
      );
    if (res.trailersOnly) problems.push("a trailers-only response, with no message");
    const status = rawStatus(res);
    if (status !== 0)
      problems.push(status === undefined ? "no single grpc-status trailer" : `grpc-status ${status}, not 0`);
    if (problems.length > 0) return fail(problems.join("; "), { details: [`seen: ${describeRaw(res)}`] });
    return pass(`one message, grpc-status 0, content-type ${contentType}`);
  },
};
