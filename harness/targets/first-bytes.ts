// The first bytes of a fresh socket, read to say what answered: the skeleton the HTTP/1.1 and HTTP/2 set-up probes
// share. It settles once, whichever comes first (an answer from the bytes, the bound, an error, the close), and
// always with the timer cleared and the socket destroyed. What the bytes mean is the caller's.
import type net from "node:net";

/** Bytes kept: enough for a status line's start or a frame header, never what a hostile target keeps sending. */
const KEPT = 64;

/** An answer, boxed so that `undefined` can be one ("it answered as it should"). */
export type Settled<T> = { answer: T } | undefined;

export interface FirstBytesReader<T> {
  /** The event that says the socket is up: "connect", or "secureConnect" for TLS. */
  connectEvent: "connect" | "secureConnect";
  timeoutMs: number;
  /** Once up: what to send, or an answer already (a TLS session that agreed on the wrong protocol). */
  connected(): Buffer | string | Settled<T>;
  /** What the bytes so far say, or undefined to read on. */
  read(received: Buffer): Settled<T>;
  timedOut(received: Buffer): T;
  failed(err: NodeJS.ErrnoException, received: Buffer): T;
  /** The peer closed; `up` says whether the connect event had come. */
  closed(received: Buffer, up: boolean): T;
}

export function readFirstBytes<T>(socket: net.Socket, reader: FirstBytesReader<T>): Promise<T> {
  return new Promise((resolve) => {
    let received = Buffer.alloc(0);
    let up = false;
    let settled = false;
    const done = (answer: T) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(() => done(reader.timedOut(received)), reader.timeoutMs);
    socket.once(reader.connectEvent, () => {
      up = true;
      const next = reader.connected();
      if (typeof next === "string" || Buffer.isBuffer(next)) socket.write(next);
      else if (next !== undefined) done(next.answer);
    });
    socket.on("error", (err: NodeJS.ErrnoException) => done(reader.failed(err, received)));
    socket.on("close", () => done(reader.closed(received, up)));
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]).subarray(0, KEPT);
      const read = reader.read(received);
      if (read !== undefined) done(read.answer);
    });
  });
}
