// The strict Message codec and gRPC framing that every check relies on.
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeMessage, encodeBodyBytes, encodeMessage, hex } from "../../contract/message.js";
import { decodeFrames, encodeFrames } from "../../harness/protocols/grpc/index.js";

describe("Message codec", () => {
  it("leaves the default body off the wire", () => {
    expect(encodeMessage("")).toHaveLength(0);
    expect(hex(encodeMessage("hi"))).toBe("0a026869");
  });

  it("round-trips any well-formed string", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (s) => {
        const d = decodeMessage(encodeMessage(s));
        expect(d).toEqual({ ok: true, message: { body: s, bodyPresent: s !== "", unknownFields: [] } });
      }),
      { seed: 7, numRuns: 200 },
    );
  });

  it("encodes exactly as BinaryWriter does, lone surrogates and long bodies included", () => {
    const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: anyUnit }), fc.string({ unit: anyUnit, minLength: 100, maxLength: 20_000 })),
        (s) => {
          const w = new BinaryWriter();
          if (s !== "") w.tag(1, WireType.LengthDelimited).string(s);
          expect(hex(encodeMessage(s))).toBe(hex(w.finish()));
        },
      ),
      { seed: 11, numRuns: 300 },
    );
  });

  it.each([
    ["0a0561", /malformed/],
    ["10", /malformed/],
    ["0801", /wire type 0/],
    ["0a02c0af", /not valid UTF-8/],
  ])("refuses %s", (bytes, reason) => {
    const d = decodeMessage(new Uint8Array(Buffer.from(bytes, "hex")));
    expect(d.ok).toBe(false);
    expect(d.ok ? "" : d.reason).toMatch(reason);
  });

  it("reports unknown fields and keeps body", () => {
    const d = decodeMessage(new Uint8Array(Buffer.from("1096010a0268697801", "hex")));
    expect(d).toEqual({ ok: true, message: { body: "hi", bodyPresent: true, unknownFields: [2, 15] } });
  });

  it("encodes raw body bytes as given", () => {
    expect(hex(encodeBodyBytes(new Uint8Array([0xff])))).toBe("0a01ff");
  });
});

describe("gRPC framing", () => {
  it("length-prefixes with the compressed flag and splits back", () => {
    const frames = [
      { compressed: false, data: new Uint8Array([1, 2, 3]) },
      { compressed: true, data: new Uint8Array() },
    ];
    const wire = encodeFrames(frames);
    expect(hex(wire)).toBe("0000000003010203" + "0100000000");
    expect(decodeFrames(wire)).toEqual({ frames, leftover: 0 });
  });

  it("reports a truncated frame as leftover bytes, not as a message", () => {
    expect(decodeFrames(new Uint8Array([0, 0, 0, 0, 9, 1, 2]))).toEqual({ frames: [], leftover: 7 });
  });
});
