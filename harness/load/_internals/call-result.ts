// What one call of a load run came to, whatever the transport: its own file, so that the transports' callers and
// the driver that counts their results do not import each other.
import { decodeFrames } from "../../protocols/grpc/index.js";
import { Status } from "../../protocols/rpc.js";

export interface CallResult {
  code: number;
  details: string;
  reply?: Buffer;
  /** The server sent a grpc-status: an error it chose, not a connection that failed. */
  answered: boolean;
  /** The name errors are counted under, where the status code alone does not say it (an HTTP operation's). */
  label?: string;
}

/** What a gRPC call's transport gathered: its status, its reply's bytes as they came, and how it ended. */
export interface GrpcCallState {
  timeoutMs: number;
  status: number | undefined;
  details: string;
  first: Buffer | undefined;
  more: Buffer[] | undefined;
  timedOut: boolean;
  /** Why the connection ended the call, where it did (the raw client's connection errors and GOAWAY). */
  failure?: string | undefined;
}

/** A gRPC call's result from what its transport gathered. */
export function grpcResult(slot: GrpcCallState, rstCode: number | undefined): CallResult {
  if (slot.status === undefined) {
    return slot.timedOut
      ? { code: Status.DEADLINE_EXCEEDED, details: `no status within ${slot.timeoutMs} ms`, answered: false }
      : slot.failure !== undefined
        ? { code: Status.UNAVAILABLE, details: slot.failure, answered: false }
        : {
            code: Status.UNAVAILABLE,
            details: `stream closed without grpc-status (HTTP/2 code ${rstCode ?? 0})`,
            answered: false,
          };
  }
  const first = slot.first;
  let reply: Buffer | undefined;
  if (
    first !== undefined &&
    slot.more === undefined &&
    first.length >= 5 &&
    first[0] === 0 &&
    first.readUInt32BE(1) === first.length - 5
  ) {
    // One uncompressed message in one chunk: node:http2 gives each chunk its own memory, so a view will do.
    reply = first.subarray(5);
  } else if (first !== undefined) {
    const { frames } = decodeFrames(slot.more ? Buffer.concat([first, ...slot.more]) : first);
    if (frames.length === 1) reply = Buffer.from((frames[0] as { data: Uint8Array }).data);
  }
  return reply
    ? { code: slot.status, details: slot.details, reply, answered: true }
    : { code: slot.status, details: slot.details, answered: true };
}
