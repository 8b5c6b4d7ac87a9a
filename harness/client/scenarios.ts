// The scenarios a client is run in: each a legal server's behaviour, played by the recording servers, so a correct
// client copes with every one. The answer to each Hello is a pure function of the scenario and how many Hello calls
// came before it.
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { encodeMessage } from "../../contract/message.js";

export type ScenarioName =
  | "usual"
  | "unknown-fields-binary"
  | "unknown-fields-json"
  | "empty-reply"
  | "unavailable-once"
  | "invalid-argument"
  | "slow-first"
  | "api-key";

/** gRPC status codes the scenarios answer with. */
export const CODE = {
  OK: 0,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  RESOURCE_EXHAUSTED: 8,
  UNAUTHENTICATED: 16,
} as const;

export type Codec = "proto" | "json";

/** One Hello's answer: a reply (held first, for the slow scenario) or an error status. */
export type HelloAnswer =
  | { kind: "reply"; body: string; unknownFields: boolean; holdMs: number }
  | { kind: "error"; code: number; message: string };

export interface Scenario {
  name: ScenarioName;
  /** What the scenario's server does, in words, for docs/check-client.md, --list and a failure's details. */
  plays: string;
  /** Every request, Hello and the resources, must carry the run's API key (with --api-key). */
  requireKey: boolean;
  /** The answer to the Hello call that had `index` Hello calls before it, spoken with this codec. */
  hello(index: number, codec: Codec, requestBody: string): HelloAnswer;
}

/** The first reply of the slow scenario is held this long (or until the client gives up on it). */
export const SLOW_FIRST_REPLY_MS = 3000;

const reply = (body: string, extra: Partial<Extract<HelloAnswer, { kind: "reply" }>> = {}): HelloAnswer => ({
  kind: "reply",
  body,
  unknownFields: false,
  holdMs: 0,
  ...extra,
});
const greeting = (body: string) => (body === "" ? "Hello" : `Hello, ${body}`);

export const SCENARIOS: Readonly<Record<ScenarioName, Scenario>> = {
  usual: {
    name: "usual",
    plays: "a server that answers every Hello at once",
    requireKey: false,
    hello: (_i, _c, body) => reply(greeting(body)),
  },
  "unknown-fields-binary": {
    name: "unknown-fields-binary",
    plays:
      "a newer server whose replies in the binary encoding carry fields this contract does not know (2, 5 and 1000)",
    requireKey: false,
    hello: (_i, codec, body) => reply(greeting(body), { unknownFields: codec === "proto" }),
  },
  "unknown-fields-json": {
    name: "unknown-fields-json",
    plays: "a newer server whose JSON replies (Connect's JSON codec) carry a member this contract does not know",
    requireKey: false,
    hello: (_i, codec, body) => reply(greeting(body), { unknownFields: codec === "json" }),
  },
  "empty-reply": {
    name: "empty-reply",
    plays: 'a server whose reply is the empty Message (body the default, "")',
    requireKey: false,
    hello: () => reply(""),
  },
  "unavailable-once": {
    name: "unavailable-once",
    plays: "a server that answers the first Hello UNAVAILABLE and the later ones at once",
    requireKey: false,
    hello: (i, _c, body) =>
      i === 0 ? { kind: "error", code: CODE.UNAVAILABLE, message: "the server is restarting" } : reply(greeting(body)),
  },
  "invalid-argument": {
    name: "invalid-argument",
    plays: "a server that refuses every Hello as INVALID_ARGUMENT (HTTP 400 over Connect)",
    requireKey: false,
    hello: () => ({ kind: "error", code: CODE.INVALID_ARGUMENT, message: "the server refuses this body" }),
  },
  "slow-first": {
    name: "slow-first",
    plays:
      `a server that holds the first Hello's reply ${SLOW_FIRST_REPLY_MS} ms (or until the client gives up) and ` +
      `answers later ones at once`,
    requireKey: false,
    hello: (i, _c, body) => reply(greeting(body), { holdMs: i === 0 ? SLOW_FIRST_REPLY_MS : 0 }),
  },
  "api-key": {
    name: "api-key",
    plays:
      "a server that controls access by the API key on every request, Hello included, and accepts it in any " +
      "header, metadata entry or query parameter, bare or as Bearer",
    requireKey: true,
    hello: (_i, _c, body) => reply(greeting(body)),
  },
};

/** Fields 2 (varint), 5 (fixed32) and 1000 (length-delimited): what a newer contract's reply could carry. */
const UNKNOWN_FIELDS: Uint8Array = (() => {
  const w = new BinaryWriter();
  w.tag(2, WireType.Varint).uint64(42);
  w.tag(5, WireType.Bit32).fixed32(7);
  w.tag(1000, WireType.LengthDelimited).string("added by a newer server");
  return w.finish();
})();

/** The reply Message in the binary encoding. */
export function encodeReply(answer: Extract<HelloAnswer, { kind: "reply" }>): Uint8Array {
  const known = encodeMessage(answer.body);
  return answer.unknownFields ? Buffer.concat([known, UNKNOWN_FIELDS]) : known;
}

/** The reply Message in proto3's JSON mapping; the default body left out, as a JSON printer does. */
export function encodeReplyJson(answer: Extract<HelloAnswer, { kind: "reply" }>): string {
  return JSON.stringify({
    ...(answer.body !== "" && { body: answer.body }),
    ...(answer.unknownFields && { addedByNewerServer: { revision: 2 } }),
  });
}
