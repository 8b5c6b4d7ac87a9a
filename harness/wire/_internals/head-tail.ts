// A HEAD response's stray body, from the raw bytes: Node's parser drops what follows a HEAD response's head, and a
// check that asks whether a server sent a body it should not have needs to see it.
import type { Socket } from "node:net";

/** How long a HEAD exchange waits after the head for bytes a server should not send. */
const HEAD_TAIL_MS = 300;

export interface HeadTail {
  /** The wait after the head, at most. */
  readonly ms: number;
  /** Given the request's socket: records its bytes (at most maxBytes kept). */
  watch(socket: Socket): void;
  /** After the response's end: the bytes past the head, once the server closed or the wait passed. */
  body(socket: Socket | null, waitMs: number): Promise<Buffer>;
}

export function readHeadTail(maxBytes: number): HeadTail {
  const raw: Buffer[] = [];
  let rawBytes = 0;
  const afterHead = () => {
    const all = Buffer.concat(raw);
    const end = all.indexOf("\r\n\r\n");
    return end === -1 ? Buffer.alloc(0) : all.subarray(end + 4);
  };
  return {
    ms: HEAD_TAIL_MS,
    watch(socket) {
      socket.on("data", (chunk: Buffer) => {
        if (rawBytes < maxBytes) raw.push(chunk);
        rawBytes += chunk.length;
      });
      // At the response's end Node closes a connection it will not reuse (destroySoon: our FIN, then destroy), and
      // what the server writes after its head in a write of its own would arrive at a closed socket, seen or not
      // by a race. Only our side is ended here: the socket reads on until the server closes it or the tail ends,
      // and the exchange's end destroys it.
      socket.destroySoon = () => void socket.end();
    },
    body(socket, waitMs) {
      if (!socket || socket.destroyed) return Promise.resolve(afterHead());
      return new Promise((resolve) => {
        const done = () => {
          clearTimeout(timer);
          resolve(afterHead());
        };
        const timer = setTimeout(done, waitMs);
        socket.once("close", done);
      });
    },
  };
}
