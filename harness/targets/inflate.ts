// Decompression of what a target sends: never synchronous, streamed through zlib in chunks off the event loop, and
// stopped as soon as the output passes its bound, so a reply of a few MB that inflates to GiBs costs a few MB.
import {
  createBrotliDecompress,
  createGunzip,
  createInflate,
  type BrotliDecompress,
  type Gunzip,
  type Inflate,
} from "node:zlib";

export type Inflated =
  | { ok: true; bytes: Uint8Array }
  | { ok: false; reason: "too-large" | "corrupt" | "unknown-encoding"; message: string };

/** The encodings a target may use that Node can decode; identity is no encoding. */
function decoderFor(encoding: string): Gunzip | Inflate | BrotliDecompress | undefined {
  switch (encoding.trim().toLowerCase()) {
    case "gzip":
    case "x-gzip":
      return createGunzip();
    case "deflate":
      return createInflate();
    case "br":
      return createBrotliDecompress();
    default:
      return undefined;
  }
}

/** Whether an encoding name means the bytes are as sent (no header, empty, or identity). */
export const isIdentity = (encoding: string | undefined): boolean =>
  encoding === undefined || ["", "identity"].includes(encoding.trim().toLowerCase());

/**
 * Decompresses data sent with this encoding into at most maxBytes. The input is fed in 64 KiB slices, each
 * decompressed in zlib's thread pool, and the output is counted as it comes: past maxBytes the stream is destroyed,
 * so the work and the memory are bounded by the bound, whatever the ratio.
 */
export function inflate(data: Uint8Array, encoding: string, maxBytes: number): Promise<Inflated> {
  if (isIdentity(encoding)) return Promise.resolve({ ok: true, bytes: data });
  const decoder = decoderFor(encoding);
  if (decoder === undefined)
    return Promise.resolve({
      ok: false,
      reason: "unknown-encoding",
      message: `an encoding the harness does not know: ${JSON.stringify(encoding.slice(0, 64))}`,
    });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const done = (result: Inflated) => {
      if (settled) return;
      settled = true;
      decoder.destroy();
      resolve(result);
    };
    decoder.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        done({
          ok: false,
          reason: "too-large",
          message: `it inflates past ${maxBytes} bytes (${data.length} bytes sent ${encoding})`,
        });
        return;
      }
      chunks.push(chunk);
    });
    decoder.on("error", (err) =>
      done({ ok: false, reason: "corrupt", message: `it does not decompress as ${encoding}: ${err.message}` }),
    );
    decoder.on("end", () => done({ ok: true, bytes: new Uint8Array(Buffer.concat(chunks, size)) }));
    feed(decoder, Buffer.from(data.buffer, data.byteOffset, data.byteLength), () => settled);
  });
}

/** Writes the input in slices, waiting for the decoder to drain, so that no more is queued than it can use. */
function feed(decoder: Gunzip | Inflate | BrotliDecompress, input: Buffer, stopped: () => boolean): void {
  const SLICE = 64 * 1024;
  let at = 0;
  const next = (): void => {
    while (at < input.length && !stopped()) {
      const slice = input.subarray(at, at + SLICE);
      at += slice.length;
      if (!decoder.write(slice)) {
        decoder.once("drain", next);
        return;
      }
    }
    if (!stopped()) decoder.end();
  };
  next();
}
