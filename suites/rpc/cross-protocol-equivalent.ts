// rpc.cross-protocol.equivalent (MUST): one operation, one contract (part 1). A server reached over several RPC
// protocols (gRPC, Connect, gRPC-Web) serves or refuses the same request alike on each, and serves equivalent
// replies: the same decoded Message. What the specification leaves open (the reply's meaning, the error codes, the
// messages' text) may be any choice, but one choice: the transport is not part of the operation. Two refusals with
// different codes are said in the result, not judged: libraries legally differ in the code of a refusal (an
// undecodable request is INVALID_ARGUMENT from one and INTERNAL from another; a key checked before routing answers
// an unknown method UNAUTHENTICATED), and a server may put a different library behind each protocol. A reply that
// varies by itself (a clock, an instance id) is found by asking the first transport twice; then only the codes are
// compared. A refusal is the protocol's own: a Connect or gRPC-Web transport that serves a binary call of Hello never
// answers another binary call of Hello HTTP 415 Unsupported Media Type, which both protocols keep for a content type
// the server does not take (Connect: a codec it does not support; gRPC PROTOCOL-HTTP2.md: a non-gRPC content-type),
// so a 415 there says the protocol is served for some requests and not others (a half-served protocol: its plain
// calls answered, every refusal left to a handler that does not speak it). A transport that takes another codec than
// binary (its binary call refused) is not judged on this.
import { decodeMessage, encodeBodyBytes, encodeMessage, hex } from "../../common/message.js";
import { fail, pass, skip, type CheckDefinition } from "../../harness/check.js";
import type { GrpcTarget } from "../../harness/targets/grpc-target.js";
import { statusText, type UnaryResult } from "../../harness/protocols/rpc.js";
import { withUnknownFields } from "../grpc/compat-unknown-fields.js";
import { show } from "../grpc/_internals/calls.js";
import { CONNECT } from "../../harness/protocols/connect/index.js";
import { frame, GRPC_WEB } from "../../harness/protocols/grpc-web/index.js";
import type { PlainRequest } from "../../harness/protocols/rpc.js";

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

/** A probe as a plain binary call over Connect or gRPC-Web; undefined for a transport with no plain exchange. */
function plainCall(t: GrpcTarget, p: Probe): PlainRequest | undefined {
  if (t.protocol === CONNECT)
    return { headers: { "content-type": "application/proto", "connect-protocol-version": "1" }, body: p.request };
  if (t.protocol === GRPC_WEB)
    return { headers: { "content-type": "application/grpc-web+proto", "x-grpc-web": "1" }, body: frame(0, p.request) };
  return undefined;
}

/**
 * The refusals a transport answers HTTP 415 though it served a binary call of Hello in the same content type (each
 * refused probe asked again plainly, beside one it served): its own protocol refused for some requests.
 */
async function halfServed(t: GrpcTarget, served: Probe, refused: readonly Probe[]): Promise<string[]> {
  const plain = plainCall(t, served);
  if (!t.exchange || plain === undefined || refused.length === 0) return [];
  const baseline = await t.exchange(plain);
  // Its binary codec not served plainly (another codec, or no answer): nothing to hold the refusals to.
  if (baseline.failure || baseline.status !== 200) return [];
  const found: string[] = [];
  for (const p of refused) {
    const res = await t.exchange(plainCall(t, p) as PlainRequest);
    if (!res.failure && res.status === 415)
      found.push(
        `${p.what} (request ${hex(p.request)}): over ${t.protocol}, HTTP 415 Unsupported Media Type for ` +
          `${JSON.stringify(plain.headers?.["content-type"])}, the content type it served 200 for ${served.what}: ` +
          `a refusal is the protocol's own error, and 415 says the protocol is not served`,
      );
  }
  return found;
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
    // Per transport, the probes of Hello it refused (unknown methods aside: another route's answer).
    const refusedOver = new Map<GrpcTarget, Probe[]>(targets.map((t) => [t, []]));
    const refuse = (t: GrpcTarget, p: Probe, code: number) => {
      if (code !== 0 && p.path === undefined) refusedOver.get(t)?.push(p);
    };
    for (const probe of CROSS_PROBES) {
      const mine = await call(first, probe);
      // Asked twice on one transport: a reply that varies there by itself is compared by its code alone.
      const again = mine.code === 0 ? await call(first, probe) : mine;
      const varies = again.code === mine.code && again.reply !== mine.reply;
      refuse(first, probe, mine.code);
      if (varies)
        notes.push(
          `${probe.what}: the reply over ${first.protocol} varies by itself (${mine.shown}, then ` +
            `${again.shown}): codes compared only`,
        );
      for (const other of others) {
        const theirs = await call(other, probe);
        refuse(other, probe, theirs.code);
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
    const served = CROSS_PROBES[1] as Probe;
    for (const t of targets) differences.push(...(await halfServed(t, served, refusedOver.get(t) ?? [])));
    if (differences.length > 0)
      return fail(`the transports answer the same request differently: ${differences.join("; ")}`, { details: notes });
    const noted = notes.length > 0 ? `; ${notes.join("; ")}` : "";
    return pass(
      `${CROSS_PROBES.length} requests served or refused alike, with the same replies, over ${names}${noted}`,
    );
  },
};
