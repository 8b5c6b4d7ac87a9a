// rpc.cross-protocol.equivalent (MUST): one operation, one contract (part 1). A server reached over several RPC
// protocols (gRPC, Connect, gRPC-Web) serves or refuses the same request alike on each, and serves equivalent
// replies: the same decoded Message. What the specification leaves open (the reply's meaning, the error codes, the
// messages' text) may be any choice, but one choice: the transport is not part of the operation. Two refusals with
// different codes are said in the result, not judged: libraries legally differ in the code of a refusal (an
// undecodable request is INVALID_ARGUMENT from one and INTERNAL from another; a key checked before routing answers
// an unknown method UNAUTHENTICATED), and a server may put a different library behind each protocol. A reply that
// varies by itself (a clock, an instance id) is found by asking the first transport twice; then only the codes are
// compared.
import { decodeMessage, encodeBodyBytes, encodeMessage, hex } from "../../contract/message.js";
import { fail, pass, skip, type CheckDefinition } from "../../harness/check.js";
import type { GrpcTarget } from "../../harness/targets/grpc-target.js";
import { statusText, type UnaryResult } from "../../harness/protocols/rpc.js";
import { withUnknownFields } from "../grpc/compat-unknown-fields.js";
import { show } from "../grpc/_internals/calls.js";

interface Probe {
  what: string;
  request: Uint8Array;
  path?: string;
}

/** The requests every transport is sent: defaults, Unicode, unknown fields, and two that must fail. */
export const CROSS_PROBES: readonly Probe[] = [
  { what: "an empty request (every field at its default)", request: new Uint8Array(0) },
  { what: "a body of several words", request: encodeMessage("one operation, one contract") },
  // Astral (U+1D11E, U+1F600), combining (e + U+0301), CJK and a right-to-left script.
  {
    what: "a Unicode body (astral and combining characters)",
    request: encodeMessage("h\u00e9llo w\u006f\u0301rld \u{1D11E} \u{1F600} \u4e16\u754c \u05e9\u05dc\u05d5\u05dd"),
  },
  { what: "a body with fields the contract does not know", request: withUnknownFields("unknown fields here") },
  {
    what: "a body that is not valid UTF-8 (a lone continuation byte)",
    request: encodeBodyBytes(new Uint8Array([0x61, 0x80, 0x62])),
  },
  { what: "an unknown method", request: encodeMessage("no such method"), path: "/example.exampleService/NoSuchMethod" },
];

/** What a reply is, to compare across transports: its code, and for OK the decoded body (or why it has none). */
function outcomeOf(r: UnaryResult): { code: number; reply?: string; shown: string } {
  if (r.code !== 0) return { code: r.code, shown: statusText(r.code, r.details) };
  const decoded = r.response ? decodeMessage(r.response) : undefined;
  if (!decoded) return { code: 0, reply: "(no message)", shown: "OK with no response message" };
  if (!decoded.ok)
    return {
      code: 0,
      reply: `(undecodable ${hex(r.response as Uint8Array)})`,
      shown: `OK, a reply that does not decode as Message (${decoded.reason})`,
    };
  return { code: 0, reply: decoded.message.body, shown: `OK ${show(decoded.message.body)}` };
}

const call = (t: GrpcTarget, p: Probe) =>
  t.unary(p.request, p.path !== undefined ? { path: p.path } : undefined).then(outcomeOf);

export const crossProtocolEquivalent: CheckDefinition = {
  id: "rpc.cross-protocol.equivalent",
  title: "the same request is served with an equivalent reply, or refused, alike over every RPC protocol served",
  severity: "MUST",
  area: "grpc",
  profile: "contract",
  spec: "§1 (one operation, Hello: one contract whatever the transport)",
  rpcTargets: "all",
  // It compares replies: what other checks send at the same time must not be taken for a difference.
  sharing: "alone",
  async run(ctx) {
    const targets = ctx.rpcTargets ?? [];
    if (targets.length < 2)
      return skip("one RPC target: give two or more of --grpc, --connect and --grpc-web to compare them");
    const [first, ...others] = targets as [GrpcTarget, ...GrpcTarget[]];
    const names = targets.map((t) => t.protocol).join(", ");
    const differences: string[] = [];
    const notes: string[] = [];
    for (const probe of CROSS_PROBES) {
      const mine = await call(first, probe);
      // Asked twice on one transport: a reply that varies there by itself is compared by its code alone.
      const again = mine.code === 0 ? await call(first, probe) : mine;
      const varies = again.code === mine.code && again.reply !== mine.reply;
      if (varies)
        notes.push(
          `${probe.what}: the reply over ${first.protocol} varies by itself (${mine.shown}, then ` +
            `${again.shown}): codes compared only`,
        );
      for (const other of others) {
        const theirs = await call(other, probe);
        // Refused on both, with different codes: the codes are the library's (connect-es answers every parse error
        // INTERNAL, grpc-js's deserializer the server's own code), said, not judged; served on one only is a
        // difference.
        if (mine.code !== 0 && theirs.code !== 0 && theirs.code !== mine.code)
          notes.push(`${probe.what}: refused with ${first.protocol} ${mine.shown}; ${other.protocol} ${theirs.shown}`);
        const differs =
          (theirs.code === 0) !== (mine.code === 0) || (mine.code === 0 && !varies && theirs.reply !== mine.reply);
        if (differs)
          differences.push(
            `${probe.what} (request ` +
              `${hex(probe.request)}${probe.path !== undefined ? ` to ${probe.path}` : ""}): ${first.protocol} ` +
              `${mine.shown}; ${other.protocol} ${theirs.shown}`,
          );
      }
    }
    if (differences.length > 0)
      return fail(`the transports answer the same request differently: ${differences.join("; ")}`, { details: notes });
    const noted = notes.length > 0 ? `; ${notes.join("; ")}` : "";
    return pass(
      `${CROSS_PROBES.length} requests served or refused alike, with the same replies, over ${names}${noted}`,
    );
  },
};
