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
  /** How many calls this target has made, for the --max-rpcs budget. */
  readonly callCount: number;
  close(): Promise<void>;
}
