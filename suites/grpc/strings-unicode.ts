// grpc.strings.unicode (property): any Unicode body gets OK and a reply that is valid UTF-8.
import fc from "fast-check";
import { encodeMessage } from "../../harness/_internals/message.js";
import type { CheckDefinition } from "../../harness/check.js";
import { anyCodePoint } from "./_internals/any-code-point.js";
import { asReply, hello, show } from "./_internals/calls.js";
import { checkProperty } from "./_internals/property.js";

/** Fixed cases every run tries first: the corners that break naive string handling. */
const EDGE_CASES: [string][] = [
  ["\u0000"],
  ["a\u0000b"],
  ["e\u0301\u0302\u0303"], // combining marks
  ["\u05e9\u05dc\u05d5\u05dd \u202eabc\u202c"], // right-to-left, with a bidi override
  ["\u{1F600}\u{1F469}\u200D\u{1F4BB}"], // astral plane and a ZWJ sequence
  ["\uFEFF\uFFFD\uFFFF"],
  ["\u{10FFFF}".repeat(16384)], // 64 KiB of the highest code point
];

export const stringsUnicode: CheckDefinition = {
  id: "grpc.strings.unicode",
  title: "any Unicode body (astral planes, NUL, combining marks, right-to-left, up to 64 KiB) gets OK and valid UTF-8",
  severity: "MUST",
  area: "grpc",
  profile: "contract",
  spec: "§2 (body: string)",
  run(ctx) {
    const body = fc.oneof(
      { weight: 4, arbitrary: fc.string({ unit: anyCodePoint, maxLength: 64 }) },
      { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 32 }) },
      { weight: 1, arbitrary: fc.string({ unit: anyCodePoint, minLength: 1024, maxLength: 4096 }) },
    );
    const property = fc.asyncProperty(body, async (text) => {
      const reply = asReply(await hello(ctx, encodeMessage(text)));
      if (!reply.ok) throw new Error(`a Unicode body was not served: ${reply.reason}`);
    });
    return checkProperty(ctx, property, ([text]) => `body ${show(text)} (${text.length} UTF-16 units)`, { examples: EDGE_CASES });
  },
};
