// What a protocol module is: its address rules, whether it needs the HTTP/2 handshake, its CLI row, and the unary
// transport it builds. A protocol is one folder under harness/protocols/ whose index.ts exports one of these.
import type { ParsedAddress } from "../targets/address.js";
import type { ConnectionOptions, TlsMaterial } from "../targets/connection.js";
import type { RawRequest, RawResponse, UnaryCallOptions, UnaryResult } from "../targets/grpc-target.js";
import type { ExchangeObserver, PlainRequest, PlainResponse } from "./http-exchange.js";

/** A unary transport: requests in, what an ordinary client sees out. Guards wrap it (harness/targets/guards.ts). */
export interface UnaryTransport {
  unary(request: Uint8Array, options?: UnaryCallOptions): Promise<UnaryResult>;
  /** For a protocol over plain HTTP: one exchange exactly as given, for its wire checks. */
  exchange?(request: PlainRequest): Promise<PlainResponse>;
  /** For gRPC: one hand-built HTTP/2 request. */
  raw?(request: RawRequest): Promise<RawResponse>;
  close(): void;
}

/** Where and how a transport connects: the resolved options of the run for this target. */
export interface TransportSetup {
  /** The connection: parsed address, display form, TLS files, authority, metadata, timeout (all resolved). */
  conn: ConnectionOptions;
  /** For a protocol spoken over a base URL: that URL. */
  url?: URL;
  /** TLS material loaded from conn.tls. */
  tls?: TlsMaterial;
  /** Observers of the shared HTTP exchange layer (protocols over plain HTTP). */
  onExchange?: readonly ExchangeObserver[];
}

export interface ProtocolModule {
  /** The name checks declare in `protocols` and --list shows. */
  readonly name: string;
  /** The CLI option that names a target of this protocol, and its row's text. */
  readonly cli: { flag: `--${string}`; value: "address" | "url"; description: string };
  /** Whether a target must complete an HTTP/2 handshake before any check (gRPC); exit 3 otherwise. */
  readonly needsHttp2Handshake: boolean;
  /** Parses the address as the user gave it (exit 2 naming the flag when it is not one). */
  endpoint(address: string, flag: string): { address: ParsedAddress; url?: URL };
  createTransport(setup: TransportSetup): UnaryTransport;
  /**
   * Asks a target, before any check, whether it speaks this protocol (one call of Hello); exit 3 when it does not.
   * A protocol without one is not asked (a test's toy protocol).
   */
  readonly speaks?: SpeaksProbe;
}

/** What a target answered a protocol's set-up probe: the protocol (an error of it included), something else, or nothing. */
export type ProbeAnswer = { speaks: true } | { speaks: false; answered: string; noReply?: boolean };

export interface SpeaksProbe {
  /** The protocol's name as a user writes it: "gRPC", "Connect". */
  readonly spoken: string;
  /** What the probe sends and what it counts as the protocol's reply, for the line that refuses a target. */
  readonly expected: string;
  ask(transport: Pick<UnaryTransport, "raw" | "exchange">, timeoutMs: number): Promise<ProbeAnswer>;
}
