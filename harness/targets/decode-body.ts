// A response body with its content codings undone, as a client that sent no Accept-Encoding reads it (RFC 9110
// §12.5.3: then any coding is acceptable), bounded after each coding: shared by the wire's exchange and the in-memory
// one.
import { MAX_RESPONSE_BYTES } from "../wire/bounds.js";
import { inflate, isIdentity } from "./inflate.js";

/** Content codings a response may stack ("gzip, br"), at most this many: more is no body a probe can read. */
const MAX_CODINGS = 3;

/** The body with its content codings undone, last applied first, bounded by MAX_RESPONSE_BYTES after each. */
export async function decodeBody(
  body: Buffer,
  encodings: readonly string[] | undefined,
): Promise<Uint8Array | { failure: { kind: "connection"; message: string } }> {
  const codings = (encodings ?? []).flatMap((v) => v.split(",")).filter((c) => !isIdentity(c));
  if (codings.length > MAX_CODINGS)
    return {
      failure: {
        kind: "connection",
        message: `the response body has ${codings.length} content codings; at most ${MAX_CODINGS} are read`,
      },
    };
  // A view, not a copy: a response of 8 MiB is held once.
  let bytes: Uint8Array = new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  for (const coding of codings.reverse()) {
    const inflated = await inflate(bytes, coding, MAX_RESPONSE_BYTES);
    if (!inflated.ok)
      return {
        failure: {
          kind: "connection",
          message: `the response body (Content-Encoding: ${coding.trim().slice(0, 64)}): ${inflated.message}`,
        },
      };
    bytes = inflated.bytes;
  }
  return bytes;
}
