// `load --grpc`'s caller on the raw HTTP/2 client: one slot per call in flight, reused call after call, each the sink
// of its call's stream, and one sweep that cancels the calls past their deadline instead of a timer per call.
import type { ParsedAddress } from "../../targets/address.js";
import { grpcMessage, HELLO_PATH } from "../../targets/grpc-target.js";
import { grpcResult, type CallResult, type GrpcCallState } from "./call-result.js";
import { RawH2Connection, type RawStreamSink } from "./raw-h2.js";

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

  constructor(readonly timeoutMs: number) {}

  start(connection: RawH2Connection, body: Buffer, done: (r: CallResult) => void): void {
    this.status = undefined;
    this.details = "";
    this.first = undefined;
    this.more = undefined;
    this.timedOut = false;
    this.failure = undefined;
    this.done = done;
    this.connection = connection;
    this.deadline = performance.now() + this.timeoutMs;
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

  close(rstCode: number | undefined, failure?: string): void {
    const done = this.done;
    if (done === undefined) return;
    this.done = undefined;
    this.stream = undefined;
    if (failure !== undefined) this.failure = failure;
    done(grpcResult(this, rstCode));
  }

  cancel(): void {
    if (this.stream === undefined || this.connection === undefined) return;
    this.timedOut = true;
    this.connection.cancel(this.stream);
  }
}

/** Calls on `connections` raw connections, slot w's calls on connection w mod connections. */
export function rawGrpcCaller(address: ParsedAddress, connections: number, concurrency: number, timeoutMs: number) {
  const conns = Array.from({ length: connections }, () => new RawH2Connection(address, HELLO_PATH));
  const slots = Array.from({ length: concurrency }, () => new RawSlot(timeoutMs));
  return {
    call: (w: number, body: Buffer) => new Promise<CallResult>((resolve) => (slots[w] as RawSlot).start(conns[w % conns.length] as RawH2Connection, body, resolve)),
    /** Cancels the calls past their deadline. */
    sweep(now: number) {
      for (const slot of slots) if (slot.stream !== undefined && now >= slot.deadline) slot.cancel();
    },
    close() {
      for (const c of conns) c.destroy();
    },
  };
}
