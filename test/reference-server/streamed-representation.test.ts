// The representations written a piece at a time are the bytes they were as whole strings: for any text (U+FEFF,
// astral characters, line and paragraph separators, everything XML or JSON escapes, lone surrogates), in JSON and
// XML, for a message, the reply, a page, an error and the root; their length is counted without writing them, and
// no piece is larger than MAX_PIECE_BYTES.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Link } from "../../reference-server/http/links.js";
import {
  encode,
  MAX_PIECE_BYTES,
  messageBytes,
  type Representation,
  serialize,
} from "../../reference-server/http/representation.js";
import { helloReply, helloReplyParts } from "../../reference-server/hello.js";
import { encodeMessage, serializeWhole, type WholeRepresentation } from "../helpers/whole-representation.js";

/** Fixed, so that a failure replays: fast-check prints the seed and path with the counterexample. */
const SEED = 38_002;
const FORMATS = ["json", "xml"] as const;

const range = (from: number, to: number) => fc.integer({ min: from, max: to }).map((c) => String.fromCodePoint(c));
const one = (...chars: string[]) => fc.constantFrom(...chars);

/**
 * One character of every kind that encodes differently: escaped in JSON or XML, multi-byte, astral, a lone surrogate.
 */
const char = fc.oneof(
  one("\uFEFF", "\u2028", "\u2029", "\u0085", "\u00a0", "\u007f"),
  one("&", "<", ">", '"', "'", "\\", "/", "\t", "\n", "\r", "\b", "\f", "\u0000", "\u0001", "\u001f"),
  range(0x20, 0x7e),
  range(0x80, 0x7ff),
  range(0x800, 0xffff),
  range(0x10000, 0x10ffff),
  // Lone surrogates never reach a store, but the encoding is exact for them too.
  range(0xd800, 0xdfff).map((c) => String.fromCharCode(c.codePointAt(0)!)),
);

/**
 * Texts short and long: runs of one character, so that a slice's or a piece's end falls anywhere, between the
 * halves of a surrogate pair too, and escaping multiplies whole slices (a run of `&` or `\u0001`).
 */
const text = fc.oneof(
  fc.string({ unit: char, maxLength: 40 }),
  fc
    .array(fc.tuple(char, fc.integer({ min: 1, max: 5000 })), { maxLength: 6 })
    .map((runs) => runs.map(([c, n]) => c.repeat(n)).join("")),
);

const link = fc.record({
  rel: fc.string({ unit: char, maxLength: 8 }),
  href: fc.string({ unit: char, maxLength: 16 }),
  method: one("GET", "POST", "PUT", "DELETE") as fc.Arbitrary<Link["method"]>,
});
const links = fc.array(link, { maxLength: 3 });
const message = fc.record({
  id: fc.option(fc.string({ unit: char, maxLength: 40 }), { nil: undefined }),
  body: text,
  links,
});

type Pair = [streamed: Representation, whole: WholeRepresentation];
const same = (r: Representation & WholeRepresentation): Pair => [r, r];
const dropUndefinedId = <M extends { id: string | undefined }>({ id, ...rest }: M) =>
  id === undefined ? rest : { id, ...rest };

/** A representation the server writes, and the same as the whole-string encoder took it (the reply's body joined). */
const representation: fc.Arbitrary<Pair> = fc.oneof(
  message.map((m) => same({ kind: "message", ...dropUndefinedId(m) })),
  fc.tuple(text, links).map(
    ([body, l]): Pair => [
      { kind: "message", body: helloReplyParts(body), links: l },
      { kind: "message", body: helloReply(body), links: l },
    ],
  ),
  fc
    .tuple(fc.array(message, { maxLength: 4 }), links)
    .map(([ms, l]) => same({ kind: "messages", messages: ms.map(dropUndefinedId), links: l })),
  fc
    .tuple(fc.integer({ min: 400, max: 599 }), fc.string({ unit: char, maxLength: 20 }), text, links)
    .map(([status, reason, m, l]) => same({ kind: "error", status, reason, message: m, links: l })),
  links.map((l) => same({ kind: "root", links: l })),
);

const utf8 = (s: string) => Buffer.from(s, "utf8");
const property = <T>(arbitrary: fc.Arbitrary<T>, check: (value: T) => void) =>
  fc.assert(fc.property(arbitrary, check), { seed: SEED, numRuns: 300 });

describe("a representation written a piece at a time", () => {
  for (const format of FORMATS) {
    it(
      `in ${format.toUpperCase()}: is, piece by piece in UTF-8, the bytes the whole string was, and says how many ` +
        `before it is written`,
      () => {
        property(representation, ([streamed, whole]) => {
          const expected = utf8(serializeWhole(format, whole));
          const encoded = encode(format, streamed);
          const pieces = [...encoded.pieces()].map(utf8);
          expect(Buffer.concat(pieces).equals(expected)).toBe(true);
          expect(encoded.bytes).toBe(expected.length);
          expect(serialize(format, streamed)).toBe(serializeWhole(format, whole));
        });
      },
    );

    it(`in ${format.toUpperCase()}: is written in pieces of at most MAX_PIECE_BYTES, none of them empty`, () => {
      property(representation, ([streamed]) => {
        const sizes = [...encode(format, streamed).pieces()].map((p) => utf8(p).length);
        expect(sizes.filter((n) => n === 0 || n > MAX_PIECE_BYTES)).toEqual([]);
      });
    });

    it(`in ${format.toUpperCase()}: measures a message of a page as the bytes the page gives it`, () => {
      property(message, (m) => {
        const one = dropUndefinedId(m);
        expect(messageBytes(format, one)).toBe(utf8(encodeMessage(format, one)).length);
      });
    });
  }

  it("cuts a 5 MiB XML body of `&` into pieces, none of which is the body", () => {
    const body = "&".repeat(1024 * 1024);
    const encoded = encode("xml", { kind: "message", id: "id", body, links: [] });
    let pieces = 0;
    for (const piece of encoded.pieces()) {
      pieces++;
      expect(utf8(piece).length).toBeLessThanOrEqual(MAX_PIECE_BYTES);
    }
    expect(encoded.bytes).toBeGreaterThan(5 * 1024 * 1024);
    expect(pieces).toBeGreaterThanOrEqual(Math.floor(encoded.bytes / MAX_PIECE_BYTES));
  });
});
