// Raw HTTP/2 frames on a plain socket, for attacks node:http2's client will not make: a reset right after HEADERS,
// resets by the thousand, header blocks past any limit. Hand-built on purpose: the point is bytes a library refuses.
import net from "node:net";

export const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
export const FRAME = { DATA: 0, HEADERS: 1, RST_STREAM: 3, SETTINGS: 4, PING: 6, GOAWAY: 7, WINDOW_UPDATE: 8, CONTINUATION: 9 } as const;
export const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4 } as const;

export function frame(type: number, flags: number, streamId: number, payload: Uint8Array = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([head, Buffer.from(payload)]);
}

/** HPACK integer with an n-bit prefix (RFC 7541 §5.1). */
function hpackInt(value: number, prefixBits: number, firstByte: number): number[] {
  const max = (1 << prefixBits) - 1;
  if (value < max) return [firstByte | value];
  const out = [firstByte | max];
  let rest = value - max;
  while (rest >= 128) {
    out.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
  return out;
}

function hpackString(s: string): Buffer {
  const bytes = Buffer.from(s, "latin1");
  return Buffer.concat([Buffer.from(hpackInt(bytes.length, 7, 0)), bytes]);
}

/** A header block of literal fields without indexing, new names, no Huffman: simple and always valid HPACK. */
export function headerBlock(headers: ReadonlyArray<readonly [string, string]>): Buffer {
  return Buffer.concat(headers.flatMap(([name, value]) => [Buffer.from([0x00]), hpackString(name), hpackString(value)]));
}

export function grpcRequestHeaders(path: string, authority = "127.0.0.1", extra: ReadonlyArray<readonly [string, string]> = []): Buffer {
  return headerBlock([
    [":method", "POST"],
    [":scheme", "http"],
    [":path", path],
    [":authority", authority],
    ["content-type", "application/grpc"],
    ["te", "trailers"],
    ...extra,
  ]);
}

export function rstStream(streamId: number, code: number): Buffer {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(code >>> 0);
  return frame(FRAME.RST_STREAM, 0, streamId, payload);
}

/**
 * A header block as HEADERS and, past the frame size every peer must accept (16,384), CONTINUATION frames: a block
 * of any size, as an attacker sends it.
 */
export function headersFrames(streamId: number, block: Buffer, endStream = false): Buffer {
  const MAX = 16_384;
  const frames: Buffer[] = [];
  for (let at = 0; at === 0 || at < block.length; at += MAX) {
    const last = at + MAX >= block.length;
    const flags = (last ? FLAG.END_HEADERS : 0) | (at === 0 && endStream ? FLAG.END_STREAM : 0);
    frames.push(frame(at === 0 ? FRAME.HEADERS : FRAME.CONTINUATION, flags, streamId, block.subarray(at, at + MAX)));
  }
  return Buffer.concat(frames);
}

export interface RawH2Connection {
  socket: net.Socket;
  /** Every byte the server sent. */
  received(): Buffer;
  /** Resolves when the server closed the connection, or after ms. */
  closed(ms: number): Promise<boolean>;
  write(...frames: Buffer[]): Promise<void>;
  destroy(): void;
}

/** Connects, sends the preface and an empty SETTINGS, and acknowledges the server's SETTINGS as they come. */
export function rawH2(port: number, options: { host?: string; localAddress?: string } = {}): Promise<RawH2Connection> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: options.host ?? "127.0.0.1", ...(options.localAddress !== undefined && { localAddress: options.localAddress }) });
    const chunks: Buffer[] = [];
    let ended = false;
    const waiters: Array<() => void> = [];
    let pending = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 9) {
        const len = pending.readUIntBE(0, 3);
        if (pending.length < 9 + len) break;
        if (pending[3] === FRAME.SETTINGS && ((pending[4] ?? 0) & FLAG.ACK) === 0 && !socket.destroyed) socket.write(frame(FRAME.SETTINGS, FLAG.ACK, 0));
        pending = pending.subarray(9 + len);
      }
    });
    socket.on("error", () => undefined);
    socket.on("close", () => {
      ended = true;
      for (const w of waiters.splice(0)) w();
    });
    socket.once("connect", () => {
      socket.write(Buffer.concat([PREFACE, frame(FRAME.SETTINGS, 0, 0)]));
      resolve({
        socket,
        received: () => Buffer.concat(chunks),
        closed: (ms) =>
          ended
            ? Promise.resolve(true)
            : new Promise<boolean>((done) => {
                const timer = setTimeout(() => done(false), ms);
                waiters.push(() => {
                  clearTimeout(timer);
                  done(true);
                });
              }),
        write: (...frames) =>
          new Promise<void>((done) => {
            if (socket.destroyed) return done();
            socket.write(Buffer.concat(frames), () => done());
          }),
        destroy: () => socket.destroy(),
      });
    });
    socket.once("error", reject);
  });
}
