// grpc.strings.invalid-utf8 (SHOULD): a body that is not valid UTF-8 is refused, as proto3 strings must be UTF-8.
import { encodeBodyBytes, hex } from "../../common/message.js";
import { fail, pass, skip, type CheckDefinition } from "../../harness/check.js";
import { asReply, hello, helloReply } from "./_internals/calls.js";

const INVALID = [
  { what: "a lone continuation byte", bytes: [0x80] },
  { what: "an overlong encoding of /", bytes: [0xc0, 0xaf] },
  { what: "a UTF-16 surrogate", bytes: [0xed, 0xa0, 0x80] },
  { what: "bytes ff fe", bytes: [0xff, 0xfe] },
];

export const stringsInvalidUtf8: CheckDefinition = {
  id: "grpc.strings.invalid-utf8",
  title: "a body that is not valid UTF-8 is refused with a non-OK status",
  severity: "SHOULD",
  area: "grpc",
  profile: "protocol",
  spec: "§2 (body is a proto3 string: UTF-8)",
  async run(ctx) {
    // A refusal only means something from a server that serves a valid body: one that fails every call
    // would otherwise pass here for nothing.
    const valid = await helloReply(ctx, "valid UTF-8: \u00e9\u4e16");
    if (!valid.ok) return skip(`a valid body was not served either (${valid.reason}), so a refusal would show nothing`);
    const accepted: string[] = [];
    for (const c of INVALID) {
      const request = encodeBodyBytes(new Uint8Array(c.bytes));
      const result = await hello(ctx, request);
      if (result.code === 0) {
        const reply = asReply(result);
        accepted.push(`${c.what} (request ${hex(request)}) got OK${reply.ok ? "" : `; and ${reply.reason}`}`);
      }
    }
    if (accepted.length > 0) return fail(`invalid UTF-8 accepted: ${accepted.join("; ")}`);
    return pass(`${INVALID.length} invalid bodies refused`);
  },
};
