// Raw HTTP/2 frames on a plain socket, for attacks node:http2's client will not make: a reset right after HEADERS,
// resets by the thousand, header blocks past any limit, flow-control windows held shut. Hand-built on purpose: the
// point is bytes a library refuses.
import net from "node:net";

export const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
export const FRAME = {
  DATA: 0,
  HEADERS: 1,
  RST_STREAM: 3,
  SETTINGS: 4,
  PING: 6,
  GOAWAY: 7,
  WINDOW_UPDATE: 8,
  CONTINUATION: 9,
} as const;
export const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4 } as const;
/** SETTINGS identifiers (RFC 9113 §6.5.2) a test sets. */
export const SETTING = { MAX_CONCURRENT_STREAMS: 0x3, INITIAL_WINDOW_SIZE: 0x4, MAX_FRAME_SIZE: 0x5 } as const;
/** Error codes of RST_STREAM and GOAWAY (RFC 9113 §7). */
export const H2_ERROR = { NO_ERROR: 0x0, REFUSED_STREAM: 0x7, CANCEL: 0x8, ENHANCE_YOUR_CALM: 0xb } as const;
/** The frame size every peer accepts, and the windows every stream and connection start with (RFC 9113 §6.5.2). */
const DEFAULT_MAX_FRAME = 16_384;
const DEFAULT_WINDOW = 65_535;

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
  return Buffer.concat(
    headers.flatMap(([name, value]) => [Buffer.from([0x00]), hpackString(name), hpackString(value)]),
  );
}

export function grpcRequestHeaders(
  path: string,
  authority = "127.0.0.1",
  extra: ReadonlyArray<readonly [string, string]> = [],
): Buffer {
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

/** The error code of the first GOAWAY among the frames a server sent, or undefined when it sent none. */
export function goawayCode(received: Buffer): number | undefined {
  for (let at = 0; at + 9 <= received.length; at += 9 + received.readUIntBE(at, 3)) {
    if (received[at + 3] === FRAME.GOAWAY && at + 17 <= received.length) return received.readUInt32BE(at + 13);
  }
  return undefined;
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

export function settingsFrame(settings: ReadonlyArray<readonly [number, number]> = []): Buffer {
  const payload = Buffer.alloc(6 * settings.length);
  settings.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, 6 * i);
    payload.writeUInt32BE(value >>> 0, 6 * i + 2);
  });
  return frame(FRAME.SETTINGS, 0, 0, payload);
}

/** WINDOW_UPDATE for a stream, or for the whole connection on stream 0. */
export function windowUpdate(streamId: number, increment: number): Buffer {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(increment & 0x7fffffff);
  return frame(FRAME.WINDOW_UPDATE, 0, streamId, payload);
}

/**
 * How the server ended one of our streams: END_STREAM (no rstCode) or RST_STREAM with its code, and when
 * (performance.now()).
 */
export interface StreamEnd {
  at: number;
  rstCode?: number;
}

export type SendOutcome = "sent" | "ended by the server" | "connection closed" | "timed out";

export interface RawH2Connection {
  socket: net.Socket;
  /** Every byte the server sent. */
  received(): Buffer;
  /** Resolves when the server closed the connection, or after ms. */
  closed(ms: number): Promise<boolean>;
  write(...frames: Buffer[]): Promise<void>;
  destroy(): void;
  /** How and when the server ended this stream; undefined while it has not. A GOAWAY or a close ends none. */
  ended(streamId: number): StreamEnd | undefined;
  /** The DATA payload the server sent on this stream so far. */
  data(streamId: number): Buffer;
  /**
   * `payload` as DATA frames on `streamId`, each within the windows the server has granted (the connection's and the
   * stream's), waiting for its WINDOW_UPDATEs as a well-behaved sender does; stops early, and says so, when the server
   * ends the stream or the connection, or when withinMs passes.
   */
  sendData(
    streamId: number,
    payload: Uint8Array,
    options: { endStream?: boolean; withinMs: number },
  ): Promise<SendOutcome>;
}

export interface RawH2Options {
  host?: string;
  localAddress?: string;
  /**
   * Sent in the client's first SETTINGS, e.g. [[SETTING.INITIAL_WINDOW_SIZE, 0]] to hold every stream's window shut.
   */
  settings?: ReadonlyArray<readonly [number, number]>;
}

/** What the frame reader learns of the server: its windows for what we send, and how each stream ended. */
interface PeerState {
  initialWindow: number;
  /** Connection window: the initial one, plus the server's WINDOW_UPDATEs on stream 0, less the DATA we sent. */
  connectionWindow: number;
  /** Per stream: the server's WINDOW_UPDATEs less the DATA we sent (the initial window is added when read). */
  streamCredit: Map<number, number>;
  ends: Map<number, StreamEnd>;
  data: Map<number, Buffer[]>;
}

function readFrame(state: PeerState, type: number, flags: number, streamId: number, payload: Buffer): void {
  if (type === FRAME.WINDOW_UPDATE && payload.length === 4) {
    const increment = payload.readUInt32BE(0) & 0x7fffffff;
    if (streamId === 0) state.connectionWindow += increment;
    else state.streamCredit.set(streamId, (state.streamCredit.get(streamId) ?? 0) + increment);
  } else if (type === FRAME.SETTINGS && (flags & FLAG.ACK) === 0) {
    for (let at = 0; at + 6 <= payload.length; at += 6) {
      if (payload.readUInt16BE(at) === SETTING.INITIAL_WINDOW_SIZE) state.initialWindow = payload.readUInt32BE(at + 2);
    }
  } else if (type === FRAME.RST_STREAM && payload.length === 4) {
    if (!state.ends.has(streamId))
      state.ends.set(streamId, { at: performance.now(), rstCode: payload.readUInt32BE(0) });
  } else if (
    (type === FRAME.HEADERS || type === FRAME.DATA) &&
    (flags & FLAG.END_STREAM) !== 0 &&
    !state.ends.has(streamId)
  ) {
    state.ends.set(streamId, { at: performance.now() });
  }
  if (type === FRAME.DATA && payload.length > 0) {
    // Padding (flag 0x8) is never sent by node:http2, the only server these helpers face.
    const list = state.data.get(streamId) ?? [];
    list.push(payload);
    state.data.set(streamId, list);
  }
}

/**
 * Connects, sends the preface and a SETTINGS (empty unless `settings` are given), acknowledges the server's SETTINGS
 * as they come, and keeps what it needs to send DATA within the server's windows and to tell how each stream ended.
 */
export function rawH2(port: number, options: RawH2Options = {}): Promise<RawH2Connection> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({
      port,
      host: options.host ?? "127.0.0.1",
      ...(options.localAddress !== undefined && { localAddress: options.localAddress }),
    });
    const chunks: Buffer[] = [];
    // Frames go out as written, as node:http2's own client sends them: Nagle's wait for an ACK would make every window
    // a round trip of the peer's delayed ACK.
    socket.setNoDelay(true);
    const state: PeerState = {
      initialWindow: DEFAULT_WINDOW,
      connectionWindow: DEFAULT_WINDOW,
      streamCredit: new Map(),
      ends: new Map(),
      data: new Map(),
    };
    let ended = false;
    const waiters: Array<() => void> = [];
    // Woken by every frame and by the close: a sender waiting for a window looks again.
    const wakers = new Set<() => void>();
    const wake = () => {
      for (const w of [...wakers]) w();
    };
    let pending = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 9) {
        const len = pending.readUIntBE(0, 3);
        if (pending.length < 9 + len) break;
        const type = pending[3] ?? 0;
        const flags = pending[4] ?? 0;
        if (type === FRAME.SETTINGS && (flags & FLAG.ACK) === 0 && !socket.destroyed)
          socket.write(frame(FRAME.SETTINGS, FLAG.ACK, 0));
        readFrame(state, type, flags, pending.readUInt32BE(5) & 0x7fffffff, pending.subarray(9, 9 + len));
        pending = pending.subarray(9 + len);
      }
      wake();
    });
    socket.on("error", () => undefined);
    socket.on("close", () => {
      ended = true;
      for (const w of waiters.splice(0)) w();
      wake();
    });
    /** Resolves at the next frame or close, or after ms. */
    const nextEvent = (ms: number) =>
      new Promise<void>((done) => {
        const finish = () => {
          clearTimeout(timer);
          wakers.delete(finish);
          done();
        };
        const timer = setTimeout(finish, ms);
        wakers.add(finish);
      });
    const drained = () =>
      new Promise<void>((done) => {
        const finish = () => {
          socket.off("drain", finish);
          socket.off("close", finish);
          done();
        };
        socket.once("drain", finish);
        socket.once("close", finish);
      });
    const sendData = async (
      streamId: number,
      payload: Uint8Array,
      opts: { endStream?: boolean; withinMs: number },
    ): Promise<SendOutcome> => {
      const deadline = performance.now() + opts.withinMs;
      let at = 0;
      do {
        if (state.ends.has(streamId)) return "ended by the server";
        if (ended || socket.destroyed) return "connection closed";
        const streamWindow = state.initialWindow + (state.streamCredit.get(streamId) ?? 0);
        const room = Math.min(state.connectionWindow, streamWindow, DEFAULT_MAX_FRAME, payload.length - at);
        if (room <= 0 && payload.length > 0) {
          const left = deadline - performance.now();
          if (left <= 0) return "timed out";
          await nextEvent(left);
          continue;
        }
        const last = at + room >= payload.length;
        state.connectionWindow -= room;
        state.streamCredit.set(streamId, (state.streamCredit.get(streamId) ?? 0) - room);
        const flushed = socket.write(
          frame(FRAME.DATA, last && opts.endStream ? FLAG.END_STREAM : 0, streamId, payload.subarray(at, at + room)),
        );
        at += room;
        if (!flushed) await drained();
      } while (at < payload.length);
      return "sent";
    };
    socket.once("connect", () => {
      socket.write(Buffer.concat([PREFACE, settingsFrame(options.settings)]));
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
        ended: (streamId) => state.ends.get(streamId),
        data: (streamId) => Buffer.concat(state.data.get(streamId) ?? []),
        sendData,
      });
    });
    socket.once("error", reject);
  });
}
