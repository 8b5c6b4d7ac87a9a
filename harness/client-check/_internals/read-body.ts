// Reads a request body within a bound: past it, reading stops and what was read is kept, marked cut.
import type { Readable } from "node:stream";

export interface BoundedBody {
  body: Uint8Array;
  truncated: boolean;
}

/** Resolves when the body ended, was cut at maxBytes, or the stream closed or failed (with what arrived). */
export function readBounded(stream: Readable, maxBytes: number): Promise<BoundedBody> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const done = (truncated: boolean) => {
      if (settled) return;
      settled = true;
      stream.off("data", onData);
      if (truncated) stream.pause();
      resolve({ body: Buffer.concat(chunks), truncated });
    };
    const onData = (chunk: Buffer) => {
      const room = maxBytes - size;
      chunks.push(chunk.subarray(0, Math.max(0, room)));
      size += chunk.length;
      if (size > maxBytes) done(true);
    };
    stream.on("data", onData);
    stream.once("end", () => done(false));
    stream.once("close", () => done(false));
    stream.once("error", () => done(false));
  });
}
