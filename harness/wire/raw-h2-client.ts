// A raw HTTP/2 client for exactly one kind of call, a unary gRPC request with a body that fits one DATA frame, over one
// TCP (or Unix) socket: the preface and SETTINGS, then per call one HEADERS frame from a cached HPACK block and one
// DATA frame, the frames of every call started in one turn of the event loop written in one write. It reads HEADERS,
// CONTINUATION, DATA, RST_STREAM, SETTINGS, PING, GOAWAY and WINDOW_UPDATE, and is bounded against what a server
// sends: a frame over 16 KiB, a header block over 64 KiB (raw or decoded), DATA past a flow-control window, a push
// or a malformed frame ends the connection (GOAWAY, every call in flight failed, no call answered that was not).
// node:http2 costs about 30 µs of CPU a call on its own (AsyncResource, streams, nghttp2's callbacks into JS); this
// costs a few: `load --grpc` sends through it, and node:http2 stays the client of the calls at rest.
// Check does not use it: it speaks one kind of well-formed call and nothing else, where a check needs any headers,
// bodies past one frame, streaming and TLS (grpc-js and harness/protocols/grpc/raw-h2.ts over harness/wire/http2.ts),
// and a check's few calls gain nothing from its speed.
import net from "node:net";
import type { ParsedAddress } from "../targets/address.js";
import { defaultAuthority } from "../targets/connection.js";
import { HpackReader, MAX_HEADER_LIST, unaryRequestBlock } from "./_internals/hpack-decode.js";

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
enum Type {
  DATA = 0,
  HEADERS = 1,
  PRIORITY = 2,
  RST_STREAM = 3,
  SETTINGS = 4,
  PUSH_PROMISE = 5,
  PING = 6,
  GOAWAY = 7,
  WINDOW_UPDATE = 8,
  CONTINUATION = 9,
}
const END_STREAM = 0x1;
const ACK = 0x1;
const END_HEADERS = 0x4;
const PADDED = 0x8;
const PRIORITY_FLAG = 0x20;
export const H2_CANCEL = 0x8;
const PROTOCOL_ERROR = 0x1;
const FLOW_CONTROL_ERROR = 0x3;
const FRAME_SIZE_ERROR = 0x6;
const REFUSED_STREAM = 0x7;
const COMPRESSION_ERROR = 0x9;
const ENHANCE_YOUR_CALM = 0xb;
/** PING and SETTINGS frames answered between two writes, and bytes the server may leave unread, at most. */
const MAX_CONTROL_REPLIES = 1000;
const MAX_UNREAD = 16 * 1024 * 1024;
const CLOSE_GRACE_MS = 1000;

/** The largest frame we accept: HTTP/2's default SETTINGS_MAX_FRAME_SIZE, which we never raise. */
const MAX_FRAME = 16_384;
/** Each stream's receive window, never replenished: no reply can be longer (gRPC's default 4 MiB message, framed). */
export const STREAM_WINDOW = 4 * 1024 * 1024 + 5;
/** The connection's receive window, replenished when half is used (grpc-go's client grows to 16 MiB). */
const CONNECTION_WINDOW = 16 * 1024 * 1024;
const MAX_STREAM_ID = 2 ** 31 - 1;

/** What the connection tells the call it carries; the call's owner (the driver's slot) implements it. */
export interface RawStreamSink {
  /** A header block's grpc-status and grpc-message, if it had them. */
  headers(status: string | undefined, message: string | undefined): void;
  data(chunk: Buffer): void;
  /**
   * The stream ended: rstCode is the RST_STREAM code, or the reason the connection failed it. `unprocessed`: the
   * server never saw or never processed it (above a GOAWAY's last stream, or never sent), so it may be sent again.
   */
  close(rstCode: number | undefined, failure?: string, unprocessed?: boolean): void;
}

class ConnectionError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

interface Stream {
  /** 0 while queued. */
  id: number;
  sink: RawStreamSink;
  body: Buffer;
  /** A header block came: the server processed the call, which can no longer be sent again. */
  headed: boolean;
  received: number;
  /** The body not yet sent, waiting for the server's flow-control window. */
  held: Buffer | undefined;
  sendWindow: number;
}

function frameHeader(length: number, type: number, flags: number, stream: number): Buffer {
  const b = Buffer.allocUnsafe(9);
  b.writeUIntBE(length, 0, 3);
  b[3] = type;
  b[4] = flags;
  b.writeUInt32BE(stream, 5);
  return b;
}

function frame(type: number, flags: number, stream: number, payload: Buffer): Buffer {
  return Buffer.concat([frameHeader(payload.length, type, flags, stream), payload]);
}

const u32 = (n: number): Buffer => {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n, 0);
  return b;
};

/** The client's SETTINGS: no push, the stream window above, and the header list bound. */
const CLIENT_SETTINGS = (() => {
  const p = Buffer.alloc(18);
  [
    [0x2, 0],
    [0x4, STREAM_WINDOW],
    [0x6, MAX_HEADER_LIST],
  ].forEach(([id, v], i) => {
    p.writeUInt16BE(id as number, i * 6);
    p.writeUInt32BE(v as number, i * 6 + 2);
  });
  return frame(Type.SETTINGS, 0, 0, p);
})();

/** One connection's calls: at most the server's SETTINGS_MAX_CONCURRENT_STREAMS open, the rest queued in order. */
export class RawH2Connection {
  private readonly socket: net.Socket;
  private readonly block: Buffer;
  private readonly hpack = new HpackReader();
  private readonly streams = new Map<number, Stream>();
  private readonly queued: Stream[] = [];
  /** Each distinct body's HEADERS and DATA frames, built once; a call copies them and writes its stream id in. */
  private readonly templates = new Map<Buffer, Buffer>();
  private out: Buffer[] = [];
  private flushing = false;
  /** Replies owed to the server's PING and SETTINGS frames since the last write: bounded, against a flood. */
  private controlReplies = 0;
  private pending: Buffer | undefined;
  /** A header block that has not ended yet (HEADERS without END_HEADERS): its stream, flags and fragments. */
  private partial: { stream: number; endStream: boolean; parts: Buffer[]; size: number } | undefined;
  private nextId = 1;
  private peerMaxStreams = Infinity;
  private peerInitialWindow = 65_535;
  private sendWindow = 65_535;
  private unacknowledged = 0;
  /** Why no call can start: set once, by GOAWAY, a connection error, or the socket's end. */
  private closed: string | undefined;
  private goawayLast = MAX_STREAM_ID;

  constructor(address: ParsedAddress, path: string) {
    this.block = unaryRequestBlock(path, defaultAuthority(address));
    this.socket =
      address.kind === "unix"
        ? net.connect(address.path)
        : net.connect({ host: address.host, port: address.port, noDelay: true });
    this.socket.on("data", (chunk: Buffer) => this.onBytes(chunk));
    this.socket.on("error", (err) => this.fail(`connection error: ${err.message}`));
    this.socket.on("close", () => this.fail("connection closed"));
    this.send(
      Buffer.concat([PREFACE, CLIENT_SETTINGS, frame(Type.WINDOW_UPDATE, 0, 0, u32(CONNECTION_WINDOW - 65_535))]),
    );
  }

  /** Whether a new call may start here: no GOAWAY came, and the connection has not failed. */
  get accepting(): boolean {
    return this.closed === undefined;
  }

  /** Starts a call; its sink hears of it from here on (at once, if no call can start). */
  request(body: Buffer, sink: RawStreamSink): Stream {
    const s: Stream = { id: 0, sink, body, headed: false, received: 0, held: body, sendWindow: 0 };
    if (this.closed !== undefined) {
      // Told in the next turn, not now: a driver whose every call fails at once still lets timers and signals run.
      const reason = this.closed;
      setImmediate(() => sink.close(undefined, reason, true));
      return s;
    }
    if (this.streams.size >= this.peerMaxStreams) this.queued.push(s);
    else this.open(s);
    return s;
  }

  /** Ends a call the caller gave up on: RST_STREAM CANCEL, and its sink closed with that code. */
  cancel(s: Stream): void {
    const q = this.queued.indexOf(s);
    if (q >= 0) this.queued.splice(q, 1);
    if (s.id !== 0 && this.streams.get(s.id) === s) {
      this.streams.delete(s.id);
      this.send(frame(Type.RST_STREAM, 0, s.id, u32(H2_CANCEL)));
    }
    s.sink.close(H2_CANCEL);
    this.drainQueue();
  }

  /** Fails what is still open, writes what is queued (a CANCEL, say) and a GOAWAY, then closes the socket. */
  destroy(): void {
    this.fail("connection closed by the client");
    if (this.socket.destroyed) return;
    this.out.push(frame(Type.GOAWAY, 0, 0, Buffer.alloc(8)));
    this.socket.end(Buffer.concat(this.out));
    this.out = [];
    this.socket.destroySoon();
    // A server that reads nothing would hold the socket open past the run: closed a second later whatever it reads.
    setTimeout(() => this.socket.destroy(), CLOSE_GRACE_MS).unref();
  }

  private open(s: Stream): void {
    if (this.nextId > MAX_STREAM_ID) {
      s.sink.close(undefined, "stream ids exhausted on this connection");
      return;
    }
    const id = this.nextId;
    this.nextId += 2;
    const body = s.body;
    s.held = body;
    s.id = id;
    this.streams.set(id, s);
    s.sendWindow = this.peerInitialWindow;
    let template = this.templates.get(body);
    if (template === undefined) {
      template = Buffer.concat([
        frameHeader(this.block.length, Type.HEADERS, END_HEADERS, 0),
        this.block,
        frameHeader(body.length, Type.DATA, END_STREAM, 0),
        body,
      ]);
      this.templates.set(body, template);
    }
    if (body.length <= s.sendWindow && body.length <= this.sendWindow) {
      const b = Buffer.allocUnsafe(template.length);
      template.copy(b);
      b.writeUInt32BE(id, 5);
      b.writeUInt32BE(id, 14 + this.block.length);
      s.held = undefined;
      this.consumeSendWindow(s, body.length);
      this.send(b);
    } else {
      // The server's window has no room for the body yet: the headers now, the body on its WINDOW_UPDATE.
      const h = template.subarray(0, 9 + this.block.length);
      const b = Buffer.from(h);
      b.writeUInt32BE(id, 5);
      this.send(b);
    }
  }

  private consumeSendWindow(s: Stream, n: number): void {
    s.sendWindow -= n;
    this.sendWindow -= n;
  }

  /** Sends the bodies held for want of window, in stream order, as far as the windows allow. */
  private releaseHeld(): void {
    for (const [id, s] of this.streams) {
      const body = s.held;
      if (body === undefined || body.length > s.sendWindow || body.length > this.sendWindow) continue;
      s.held = undefined;
      this.consumeSendWindow(s, body.length);
      this.send(Buffer.concat([frameHeader(body.length, Type.DATA, END_STREAM, id), body]));
    }
  }

  private drainQueue(): void {
    while (this.queued.length > 0 && this.streams.size < this.peerMaxStreams && this.closed === undefined)
      this.open(this.queued.shift() as Stream);
  }

  /** Queues bytes; everything queued in this turn of the event loop goes out in one write. */
  private send(b: Buffer): void {
    this.out.push(b);
    if (this.flushing) return;
    this.flushing = true;
    setImmediate(() => {
      this.flushing = false;
      this.controlReplies = 0;
      const out = this.out;
      this.out = [];
      if (this.socket.destroyed) return;
      this.socket.write(out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out));
      // A server that reads nothing while it makes us answer: what we owe it stays bounded.
      if (this.socket.writableLength > MAX_UNREAD) {
        this.fail(`connection error: the server left ${this.socket.writableLength} bytes unread`);
        this.socket.destroy();
      }
    });
  }

  private onBytes(chunk: Buffer): void {
    let buf = this.pending === undefined ? chunk : Buffer.concat([this.pending, chunk]);
    this.pending = undefined;
    let off = 0;
    try {
      while (buf.length - off >= 9) {
        const length = buf.readUIntBE(off, 3);
        if (length > MAX_FRAME)
          throw new ConnectionError(FRAME_SIZE_ERROR, `a frame of ${length} bytes (at most ${MAX_FRAME})`);
        if (buf.length - off - 9 < length) break;
        const type = buf[off + 3] as number;
        const flags = buf[off + 4] as number;
        const stream = buf.readUInt32BE(off + 5) & 0x7fffffff;
        this.onFrame(type, flags, stream, buf.subarray(off + 9, off + 9 + length));
        off += 9 + length;
      }
    } catch (err) {
      const e =
        err instanceof ConnectionError
          ? err
          : new ConnectionError(
              COMPRESSION_ERROR,
              `a header block HPACK cannot decode: ${err instanceof Error ? err.message : String(err)}`,
            );
      this.send(frame(Type.GOAWAY, 0, 0, Buffer.concat([u32(Math.max(this.nextId - 2, 0)), u32(e.code)])));
      this.fail(`connection error: ${e.message}`);
      setImmediate(() => this.socket.destroy());
      return;
    }
    if (off < buf.length) buf = buf.subarray(off);
    else return;
    this.pending = buf;
  }

  private onFrame(type: number, flags: number, stream: number, payload: Buffer): void {
    if (this.partial !== undefined && (type !== Type.CONTINUATION || stream !== this.partial.stream)) {
      throw new ConnectionError(PROTOCOL_ERROR, "a frame inside a header block");
    }
    switch (type) {
      case Type.DATA:
        return this.onDataFrame(flags, stream, payload);
      case Type.HEADERS:
        return this.onHeadersFrame(flags, stream, payload);
      case Type.CONTINUATION:
        if (this.partial === undefined) throw new ConnectionError(PROTOCOL_ERROR, "CONTINUATION without HEADERS");
        return this.addFragment(flags, payload);
      case Type.RST_STREAM:
        if (payload.length !== 4) throw new ConnectionError(FRAME_SIZE_ERROR, "RST_STREAM not 4 bytes");
        return this.end(stream, payload.readUInt32BE(0));
      case Type.SETTINGS:
        return this.onSettings(flags, stream, payload);
      case Type.PING:
        if (payload.length !== 8 || stream !== 0)
          throw new ConnectionError(FRAME_SIZE_ERROR, "PING not 8 bytes on stream 0");
        if ((flags & ACK) === 0) {
          this.owe();
          this.send(frame(Type.PING, ACK, 0, Buffer.from(payload)));
        }
        return;
      case Type.GOAWAY:
        if (payload.length < 8) throw new ConnectionError(FRAME_SIZE_ERROR, "GOAWAY under 8 bytes");
        return this.onGoaway(payload.readUInt32BE(0) & 0x7fffffff, payload.readUInt32BE(4));
      case Type.WINDOW_UPDATE:
        return this.onWindowUpdate(stream, payload);
      case Type.PUSH_PROMISE:
        throw new ConnectionError(PROTOCOL_ERROR, "PUSH_PROMISE, where SETTINGS_ENABLE_PUSH is 0");
      default:
        // PRIORITY and frame types this client does not know: ignored, as RFC 9113 says.
        return;
    }
  }

  /** The payload without its padding (PADDED) and priority fields (PRIORITY on HEADERS). */
  private unpad(flags: number, payload: Buffer, priority: boolean): Buffer {
    let start = 0;
    let pad = 0;
    if (flags & PADDED) {
      if (payload.length < 1) throw new ConnectionError(PROTOCOL_ERROR, "a padded frame without its pad length");
      pad = payload[0] as number;
      start = 1;
    }
    if (priority && flags & PRIORITY_FLAG) start += 5;
    if (start + pad > payload.length) throw new ConnectionError(PROTOCOL_ERROR, "padding longer than the frame");
    return payload.subarray(start, payload.length - pad);
  }

  private onDataFrame(flags: number, id: number, payload: Buffer): void {
    if (id === 0) throw new ConnectionError(PROTOCOL_ERROR, "DATA on stream 0");
    this.unacknowledged += payload.length;
    if (this.unacknowledged > CONNECTION_WINDOW)
      throw new ConnectionError(FLOW_CONTROL_ERROR, "DATA past the connection's window");
    if (this.unacknowledged >= CONNECTION_WINDOW / 2) {
      this.send(frame(Type.WINDOW_UPDATE, 0, 0, u32(this.unacknowledged)));
      this.unacknowledged = 0;
    }
    const s = this.streams.get(id);
    if (s === undefined) return;
    s.received += payload.length;
    if (s.received > STREAM_WINDOW) {
      this.streams.delete(id);
      this.send(frame(Type.RST_STREAM, 0, id, u32(FLOW_CONTROL_ERROR)));
      s.sink.close(FLOW_CONTROL_ERROR, `the server sent past the stream's window (${STREAM_WINDOW} bytes)`);
      this.drainQueue();
      return;
    }
    const data = this.unpad(flags, payload, false);
    if (data.length > 0) s.sink.data(data);
    if (flags & END_STREAM) this.end(id, undefined);
  }

  private onHeadersFrame(flags: number, id: number, payload: Buffer): void {
    if (id === 0) throw new ConnectionError(PROTOCOL_ERROR, "HEADERS on stream 0");
    const fragment = this.unpad(flags, payload, true);
    this.partial = { stream: id, endStream: (flags & END_STREAM) !== 0, parts: [], size: 0 };
    this.addFragment(flags, fragment);
  }

  private addFragment(flags: number, fragment: Buffer): void {
    const p = this.partial as NonNullable<RawH2Connection["partial"]>;
    p.size += fragment.length;
    if (p.size > MAX_HEADER_LIST)
      throw new ConnectionError(PROTOCOL_ERROR, `a header block over ${MAX_HEADER_LIST} bytes`);
    p.parts.push(fragment);
    if ((flags & END_HEADERS) === 0) return;
    this.partial = undefined;
    // Decoded whatever its stream: the dynamic table must follow every block the server sent.
    const fields = this.hpack.read(p.parts.length === 1 ? (p.parts[0] as Buffer) : Buffer.concat(p.parts));
    const s = this.streams.get(p.stream);
    if (s === undefined) return;
    s.headed = true;
    s.sink.headers(fields.status, fields.message);
    if (p.endStream) this.end(p.stream, undefined);
  }

  private onSettings(flags: number, stream: number, payload: Buffer): void {
    if (stream !== 0 || payload.length % 6 !== 0)
      throw new ConnectionError(FRAME_SIZE_ERROR, "a malformed SETTINGS frame");
    if (flags & ACK) return;
    for (let i = 0; i < payload.length; i += 6) {
      const id = payload.readUInt16BE(i);
      const value = payload.readUInt32BE(i + 2);
      if (id === 0x3) this.peerMaxStreams = value;
      if (id === 0x4) {
        if (value > MAX_STREAM_ID)
          throw new ConnectionError(FLOW_CONTROL_ERROR, "SETTINGS_INITIAL_WINDOW_SIZE over 2^31-1");
        for (const s of this.streams.values()) s.sendWindow += value - this.peerInitialWindow;
        this.peerInitialWindow = value;
      }
    }
    this.owe();
    this.send(frame(Type.SETTINGS, ACK, 0, Buffer.alloc(0)));
    this.releaseHeld();
    this.drainQueue();
  }

  private owe(): void {
    if (++this.controlReplies > MAX_CONTROL_REPLIES)
      throw new ConnectionError(ENHANCE_YOUR_CALM, `over ${MAX_CONTROL_REPLIES} PING or SETTINGS frames in one read`);
  }

  private onWindowUpdate(stream: number, payload: Buffer): void {
    if (payload.length !== 4) throw new ConnectionError(FRAME_SIZE_ERROR, "WINDOW_UPDATE not 4 bytes");
    const n = payload.readUInt32BE(0) & 0x7fffffff;
    if (stream === 0) this.sendWindow += n;
    else {
      const s = this.streams.get(stream);
      if (s !== undefined) s.sendWindow += n;
    }
    this.releaseHeld();
  }

  /** GOAWAY: no new call here; the calls the server will not process fail, the others finish. */
  private onGoaway(last: number, code: number): void {
    this.goawayLast = Math.min(this.goawayLast, last);
    this.closed ??= `GOAWAY from the server (HTTP/2 code ${code})`;
    for (const [id, s] of this.streams) {
      if (id <= this.goawayLast) continue;
      this.streams.delete(id);
      s.sink.close(undefined, `not processed: GOAWAY (HTTP/2 code ${code}, last stream ${last})`, true);
    }
    for (const s of this.queued.splice(0)) s.sink.close(undefined, this.closed, true);
  }

  private end(id: number, rstCode: number | undefined): void {
    const s = this.streams.get(id);
    if (s === undefined) return;
    this.streams.delete(id);
    if (rstCode === REFUSED_STREAM && !s.headed && s.received === 0) {
      // Refused before the server processed it (over its stream limit before its SETTINGS came): sent again, as
      // grpc-go does, until the call's deadline.
      s.id = 0;
      this.queued.push(s);
    } else s.sink.close(rstCode);
    this.drainQueue();
  }

  /** No call can start from here on, and every call still open fails with the reason. */
  private fail(reason: string): void {
    this.closed ??= reason;
    const open = [...this.streams.values()];
    this.streams.clear();
    // Calls still queued were never sent: they may go on another connection. Those open may have been processed.
    for (const s of this.queued.splice(0)) s.sink.close(undefined, reason, true);
    for (const s of open) s.sink.close(undefined, reason);
  }
}
