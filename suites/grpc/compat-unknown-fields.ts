// grpc.compat.unknown-fields: a newer client's fields the contract does not know are accepted and change nothing.
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { encodeMessage, hex } from "../../contract/message.js";
import { fail, pass, type CheckDefinition } from "../../harness/check.js";
import { asReply, hello, show } from "./_internals/calls.js";
import { compareReplies } from "./_internals/variation.js";

/** body "compat" plus fields 2 (varint), 3 (string), 15 (fixed32), 1000 (fixed64) and 4 (a nested message). */
export function withUnknownFields(body: string): Uint8Array {
  const w = new BinaryWriter();
  w.tag(2, WireType.Varint).int32(150);
  w.raw(encodeMessage(body));
  w.tag(3, WireType.LengthDelimited).string("from a newer client");
  w.tag(15, WireType.Bit32).fixed32(7);
  w.tag(1000, WireType.Bit64).fixed64(1n);
  w.tag(4, WireType.LengthDelimited).fork().tag(1, WireType.Varint).int32(1).join();
  return w.finish();
}

export const compatUnknownFields: CheckDefinition = {
  id: "grpc.compat.unknown-fields",
  title: "a request with fields the contract does not know is accepted and gets the same reply as without them",
  severity: "MUST",
  area: "grpc",
  profile: "contract",
  spec: "§9 (independent upgrades), proto3 unknown fields",
  async run(ctx) {
    const body = "compat";
    const request = withUnknownFields(body);
    const plain = asReply(await hello(ctx, encodeMessage(body), { channel: "fresh" }));
    const extended = asReply(await hello(ctx, request, { channel: "fresh" }));
    const details = [`request bytes: ${hex(request)}`];
    if (!extended.ok) return fail(`a request with unknown fields was refused: ${extended.reason}`, { details });
    if (!plain.ok) return fail(`the plain request was not served: ${plain.reason}`);
    const same = await compareReplies(ctx, plain.message.body, extended.message.body);
    if (same.verdict === "same")
      return pass(`same reply ${show(plain.message.body)} with and without unknown fields${same.note}`);
    if (same.verdict === "not-compared") return pass(`accepted; ${same.note}`);
    return fail(
      `unknown fields changed the reply: ${show(plain.message.body)} without, ${show(extended.message.body)} with`,
      { details },
    );
  },
};
