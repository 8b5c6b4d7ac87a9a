// grpc.strings.unicode (property): any Unicode body gets OK and a reply that is valid UTF-8.
import fc from "fast-check";
import { encodeMessage } from "../../contract/message.js";
import type { CheckDefinition } from "../../harness/check.js";
import { anyCodePoint } from "./_internals/any-code-point.js";
import { asReply, hello, show } from "./_internals/calls.js";
import { checkProperty } from "./_internals/property.js";
import { bodyBytesAllowed } from "./_internals/receive-limit.js";

/** The longest body tried, in UTF-8 bytes, when the target's own limit allows it. */
const BOUND = 64 * 1024;
/** Room for the Message's tag and length prefix, so the whole message stays under a limit of the body's size. */
const FRAMING = 8;

/**
 * A body as a case: short text, or one code point repeated. A long body is a count, so shrinking it halves a
 * number instead of walking a string of thousands of code points (which is slow and holds the event loop).
 */
type Body = { text: string } | { repeat: string; count: number };
const render = (b: Body): string => ("text" in b ? b.text : b.repeat.repeat(b.count));

/** Fixed cases every run tries first: the corners that break naive string handling. */
function edgeCases(maxBytes: number): Body[] {
  return [
    { text: "\u0000" },
    { text: "a\u0000b" },
    { text: "e\u0301\u0302\u0303" }, // combining marks
    { text: "\u05e9\u05dc\u05d5\u05dd \u202eabc\u202c" }, // right-to-left, with a bidi override
    { text: "\u{1F600}\u{1F469}\u200D\u{1F4BB}" }, // astral plane and a ZWJ sequence
    { text: "\uFEFF\uFFFD\uFFFF" },
    // The highest code point, 4 bytes each, as many as the target's limit and the bound allow.
    { repeat: "\u{10FFFF}", count: Math.floor(maxBytes / 4) },
  ];
}

export const stringsUnicode: CheckDefinition = {
  id: "grpc.strings.unicode",
  title:
    "any Unicode body (astral planes, NUL, combining marks, right-to-left, up to 64 KiB or the target's limit) " +
    "gets OK and valid UTF-8",
  severity: "MUST",
  area: "grpc",
  profile: "contract",
  spec: "§2 (body: string)",
  async run(ctx) {
    const maxBytes = Math.max(0, (await bodyBytesAllowed(ctx, BOUND)) - FRAMING);
    // Each code point is at most 4 UTF-8 bytes: counts are kept so that the body stays under maxBytes.
    const maxCount = Math.max(1, Math.floor(maxBytes / 4));
    const body: fc.Arbitrary<Body> = fc.oneof(
      { weight: 4, arbitrary: fc.string({ unit: anyCodePoint, maxLength: 64 }).map((text) => ({ text }), unText) },
      { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 32 }).map((text) => ({ text }), unText) },
      {
        weight: 1,
        arbitrary: fc
          .record({
            repeat: anyCodePoint,
            count: fc.integer({ min: Math.min(1024, maxCount), max: Math.min(4096, maxCount) }),
          })
          .map((b): Body => b),
      },
    );
    return checkProperty(
      ctx,
      body,
      async (b) => {
        const reply = asReply(await hello(ctx, encodeMessage(render(b))));
        if (!reply.ok) throw new Error(`a Unicode body was not served: ${reply.reason}`);
      },
      (b) =>
        "text" in b
          ? `body ${show(b.text)} (${b.text.length} UTF-16 units)`
          : `body of ${show(b.repeat)} repeated ${b.count} times`,
      { examples: edgeCases(maxBytes) },
    );
  },
};

function unText(value: unknown): string {
  if (typeof value === "object" && value !== null && "text" in value && typeof value.text === "string")
    return value.text;
  throw new Error("not a text body");
}
