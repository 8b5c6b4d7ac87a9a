// grpc.trailers.status: grpc-status present exactly once, and grpc-message percent-encoded, on success and on error.
import { encodeMessage } from "../../contract/message.js";
import { fail, pass, type CheckDefinition } from "../../harness/check.js";
import type { RawResponse } from "../../harness/protocols/rpc.js";
import { target } from "./_internals/calls.js";
import { describeRaw } from "./_internals/raw.js";
import { GRPC } from "../../harness/protocols/grpc/index.js";

/** PROTOCOL-HTTP2.md: Percent-Byte-Unencoded is 0x20-0x7E except %, so anything else must be %XX-encoded. */
const PERCENT_ENCODED = /^(?:[\x20-\x24\x26-\x7e]|%[0-9A-Fa-f]{2})*$/;

function problemsOf(what: string, res: RawResponse): string[] {
  if (res.failure && res.failure.kind !== "reset") return [`${what}: ${describeRaw(res)}`];
  const block = res.trailersOnly ? res.headers : res.trailers;
  const statuses = block["grpc-status"] ?? [];
  const inHeaders = res.trailersOnly ? 0 : (res.headers["grpc-status"] ?? []).length;
  const out: string[] = [];
  if (statuses.length !== 1) out.push(`${what}: grpc-status appears ${statuses.length} times in the trailers`);
  else if (!/^\d+$/.test(statuses[0] as string))
    out.push(`${what}: grpc-status ${JSON.stringify(statuses[0])} is not a number`);
  if (inHeaders > 0) out.push(`${what}: grpc-status also in the response headers of a response with a body`);
  for (const m of block["grpc-message"] ?? []) {
    if (!PERCENT_ENCODED.test(m)) out.push(`${what}: grpc-message ${JSON.stringify(m)} is not percent-encoded`);
  }
  return out;
}

export const trailersStatus: CheckDefinition = {
  id: "grpc.trailers.status",
  title: "grpc-status is sent exactly once and grpc-message is percent-encoded, for a success and for an error",
  severity: "MUST",
  area: "grpc",
  profile: "protocol",
  spec: "gRPC PROTOCOL-HTTP2.md (Trailers, Status-Message)",
  // Built by hand for gRPC's wire rules over HTTP/2.
  protocols: [GRPC],
  async run(ctx) {
    const ok = await target(ctx).raw({ body: [{ compressed: false, data: encodeMessage("trailers") }] });
    // An unknown method whose name holds "%" invites an error message that must encode it as %25.
    const error = await target(ctx).raw({
      path: "/example.exampleService/Unknown%Method",
      body: [{ compressed: false, data: encodeMessage("trailers") }],
    });
    const problems = [...problemsOf("a successful call", ok), ...problemsOf("an unknown method", error)];
    if (problems.length > 0) return fail(problems.join("; "));
    return pass("one grpc-status each; messages percent-encoded");
  },
};
