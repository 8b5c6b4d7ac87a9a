// The boundary between checks and an RPC target: checks see only these interfaces, never grpc-js or node:http2.
import type {
  PlainRequest,
  PlainResponse,
  RawRequest,
  RawResponse,
  UnaryCallOptions,
  UnaryResult,
} from "../protocols/rpc.js";

export interface GrpcTarget {
  /** The address as the user gave it, for reports and replay lines. */
  readonly address: string;
  /**
   * The name of the protocol the target is spoken to in (a key of PROTOCOLS): unary() speaks it; raw() is gRPC's alone.
   * "in-memory": no wire at all.
   */
  readonly protocol: string;
  /** For a target over HTTP (Connect, gRPC-Web): one plain HTTP exchange, for that protocol's wire checks. */
  exchange?(request: PlainRequest): Promise<PlainResponse>;
  /** Calls Hello (or another path) with raw request bytes through grpc-js. */
  unary(request: Uint8Array, options?: UnaryCallOptions): Promise<UnaryResult>;
  /** Sends one hand-built HTTP/2 request on its own connection. */
  raw(request: RawRequest): Promise<RawResponse>;
  /**
   * Opens `count` fresh connections ahead of calls to come with channel "fresh", at most `limit` at once, so that they
   * connect side by side instead of each at its call; each is still taken by one call only, and opens no call.
   * Returns what closes those not taken. Absent where a fresh call opens no connection of its own (in memory).
   */
  openAhead?(count: number, limit: number): () => void;
  /** How many calls this target has made, for the --max-rpcs budget. */
  readonly callCount: number;
  close(): Promise<void>;
}
