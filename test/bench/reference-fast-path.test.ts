// The reference's fast path for the common Hello request and reply gives exactly what the strict decoder and the
// encoder give: it is a saving of time, never a change of verdict.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeMessage, encodeBodyBytes, encodeMessage } from "../../contract/message.js";
import { commonBody, encodeReply } from "../../reference-server/grpc.js";

const agrees = (bytes: Uint8Array) => {
  const fast = commonBody(Buffer.from(bytes));
  if (fast === undefined) return; // left to decodeMessage itself
  const strict = decodeMessage(bytes);
  expect(strict.ok).toBe(true);
  if (strict.ok) {
    expect(strict.message.unknownFields).toEqual([]);
    expect(fast).toBe(strict.message.body);
  }
};

describe("the reference's fast path", () => {
  it("decodes only what decodeMessage accepts, to the same body", () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 40 }), agrees), { numRuns: 5000 });
    // Field 1 with arbitrary bytes (UTF-8 or not) and lengths across the one- and two-byte varints.
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 20_000 }), (raw) => agrees(encodeBodyBytes(raw))),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 300 }), (s) => agrees(encodeMessage(s))),
      { numRuns: 2000 },
    );
  });

  it("takes the common request, and leaves a byte order mark, trailing bytes and long varints to decodeMessage", () => {
    expect(commonBody(Buffer.from(encodeMessage("hi é")))).toBe("hi é");
    expect(commonBody(Buffer.alloc(0))).toBe("");
    expect(commonBody(Buffer.from(encodeMessage("\uFEFFbom")))).toBeUndefined();
    expect(commonBody(Buffer.from([0x0a, 0x01, 0x41, 0x10, 0x01]))).toBeUndefined();
    expect(commonBody(Buffer.from([0x0a, 0x81, 0x80, 0x00]))).toBeUndefined();
    expect(commonBody(Buffer.from([0x0a, 0x01, 0xff]))).toBeUndefined();
  });

  it("encodes every reply as encodeMessage does", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 6000 }), (s) => {
        expect(Buffer.from(encodeReply(s)).equals(Buffer.from(encodeMessage(s)))).toBe(true);
      }),
      { numRuns: 500 },
    );
    expect(encodeReply("").length).toBe(0);
  });
});
