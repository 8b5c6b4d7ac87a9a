// `load --grpc`'s caller on the raw HTTP/2 client: one slot per call in flight, reused call after call, each the sink
// of its call's stream, and one sweep that cancels the calls past their deadline instead of a timer per call. A
// connection the server ends (GOAWAY after N calls, as nginx does; a maximum connection age, as grpc-go's) is replaced,
// and the calls it did not process are sent again on the new one: a deployment's limit, not an error.
import type { ParsedAddress } from "../../targets/address.js";
import { grpcMessage, HELLO_PATH } from "../../protocols/rpc.js";
import { grpcResult, type CallResult, type GrpcCallState } from "./call-result.js";
import { RawH2Connection, type RawStreamSink } from "../../wire/raw-h2-client.js";

class RawSlot implements RawStreamSink, GrpcCallState {
  status: number | undefined = undefined;
  details = "";
  first: Buffer | undefined = undefined;
  more: Buffer[] | undefined = undefined;
  timedOut = false;
  failure: string | undefined = undefined;
  deadline = 0;
  stream: ReturnType<RawH2Connection["request"]> | undefined = undefined;
  connection: RawH2Connection | undefined = undefined;
  done: ((r: CallResult) => void) | undefined = undefined;
  body: Buffer = Buffer.alloc(0);
  /** Times this call was sent again after a connection did not process it. */
  resent = 0;

  constructor(
    readonly timeoutMs: number,
    /** A connection that accepts calls, for this slot: a new one when its own was ended. */
    private readonly connectionFor: () => RawH2Connection,
  ) {}

  start(connection: RawH2Connection, body: Buffer, done: (r: CallResult) => void): void {
    this.resent = 0;
    this.deadline = performance.now() + this.timeoutMs;
    this.send(connection, body, done);
  }

  /** Sends the call on `connection`; the deadline stays the call's own. */
  private send(connection: RawH2Connection, body: Buffer, done: (r: CallResult) => void): void {
    this.status = undefined;
    this.details = "";
    this.first = undefined;
    this.more = undefined;
    this.timedOut = false;
    this.failure = undefined;
    this.done = done;
    this.connection = connection;
    this.body = body;
    this.stream = undefined;
    const stream = connection.request(body, this);
    // A call the connection could not start has already ended.
    if (this.done !== undefined) this.stream = stream;
  }

  headers(status: string | undefined, message: string | undefined): void {
    if (status === undefined) return;
    this.status = Number(status);
    this.details = grpcMessage(message);
  }

  data(chunk: Buffer): void {
    if (this.first === undefined) this.first = chunk;
    else (this.more ??= []).push(chunk);
  }

  close(rstCode: number | undefined, failure?: string, unprocessed?: boolean): void {
    const done = this.done;
    if (done === undefined) return;
    this.done = undefined;
    this.stream = undefined;
    // Not processed (over a GOAWAY's last stream, or never sent): on a connection that accepts it, within the deadline.
    if (unprocessed === true && this.resent < MAX_RESENDS && performance.now() < this.deadline) {
      this.resent++;
      this.send(this.connectionFor(), this.body, done);
      return;
    }
    if (failure !== undefined) this.failure = failure;
    done(grpcResult(this, rstCode));
  }

  cancel(): void {
    if (this.stream === undefined || this.connection === undefined) return;
    this.timedOut = true;
    this.connection.cancel(this.stream);
  }
}

/** Sends of one call on new connections at most: a server that ends every connection at once gets the call failed. */
const MAX_RESENDS = 3;
/** Ended connections kept until they close by themselves; past this many the oldest is closed. */
const RETIRED_KEPT = 64;

/**
 * Calls on `connections` raw connections, slot w's calls on connection w mod connections. A connection that no
 * longer accepts calls is replaced (`reconnections`); the old one finishes the calls it processes and is closed at
 * the end.
 */
export function rawGrpcCaller(address: ParsedAddress, connections: number, concurrency: number, timeoutMs: number) {
  const conns = Array.from({ length: connections }, () => new RawH2Connection(address, HELLO_PATH));
  const retired: RawH2Connection[] = [];
  const counts = { reconnections: 0 };
  const connectionFor = (w: number): RawH2Connection => {
    const i = w % conns.length;
    const c = conns[i] as RawH2Connection;
    if (c.accepting) return c;
    // The old one is left to end by itself (the server closes it once its last calls are answered), or at close().
    retired.push(c);
    if (retired.length > RETIRED_KEPT) retired.shift()?.destroy();
    const fresh = new RawH2Connection(address, HELLO_PATH);
    conns[i] = fresh;
    counts.reconnections++;
    return fresh;
  };
  const slots = Array.from({ length: concurrency }, (_, w) => new RawSlot(timeoutMs, () => connectionFor(w)));
  return {
    counts,
    call: (w: number, body: Buffer) =>
      new Promise<CallResult>((resolve) => (slots[w] as RawSlot).start(connectionFor(w), body, resolve)),
    /** Cancels the calls past their deadline. */
    sweep(now: number) {
      for (const slot of slots) if (slot.stream !== undefined && now >= slot.deadline) slot.cancel();
    },
    close() {
      for (const c of [...conns, ...retired.splice(0)]) c.destroy();
    },
  };
}
