// What a protocol module is: its address rules, whether it needs the HTTP/2 handshake, its CLI row, and the unary
// transport it builds. A protocol is one folder under harness/protocols/ whose index.ts exports one of these.
import type { ServerResponse } from "node:http";
import type { ServerHttp2Stream } from "node:http2";
import type { Codec, HelloAnswer } from "../client-check/scenarios.js";
import type { ParsedAddress } from "../targets/address.js";
import type { ConnectionOptions, TlsMaterial } from "../targets/connection.js";
import type { RawRequest, RawResponse, UnaryCallOptions, UnaryResult } from "./rpc.js";
import type { ExchangeObserver, PlainRequest, PlainResponse } from "./http-exchange.js";

/** A unary transport: requests in, what an ordinary client sees out. Guards wrap it (harness/targets/guards.ts). */
export interface UnaryTransport {
  unary(request: Uint8Array, options?: UnaryCallOptions): Promise<UnaryResult>;
  /** For a protocol over plain HTTP: one exchange exactly as given, for its wire checks. */
  exchange?(request: PlainRequest): Promise<PlainResponse>;
  /** For gRPC: one hand-built HTTP/2 request. */
  raw?(request: RawRequest): Promise<RawResponse>;
  /** Where a fresh call opens a connection of its own: opens `count` ahead, at most `limit` at once (GrpcTarget). */
  openAhead?(count: number, limit: number): () => void;
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
  /**
   * How a trace reads this protocol's exchanges; a protocol without it has its bodies shown as they are, over HTTP/1.1.
   */
  readonly trace?: TraceReading;
  /** How check-client's recording servers take this protocol's calls; a protocol without it is not recorded. */
  readonly recording?: RecordingSide;
}

/** How a trace reads a protocol's exchanges. */
export interface TraceReading {
  /** The HTTP version its exchanges go over, as a HAR file names it. */
  readonly httpVersion: "HTTP/1.1" | "HTTP/2";
  /** How a check's trace shows them: as text, call by call with its frames (gRPC's), or as a HAR file. */
  readonly format: "text" | "har";
  /** Whether a body of this content type (lowercased) is length-prefixed frames, one Message, or neither. */
  bodyShape(contentType: string): "frames" | "message" | "other";
}

/** A request as check-client's recording servers kept it: what a protocol's recording side reads. */
export interface RecordedCall {
  readonly method: string;
  readonly path: string;
  /** Header names lowercased, pseudo-headers left out. */
  readonly headers: Readonly<Record<string, readonly string[]>>;
  readonly body: Uint8Array;
}

/**
 * check-client's side of a protocol: which recorded calls are its, what they are called, and what makes one invalid.
 */
export interface RecordingSide {
  /** The protocol's name as a report writes it: "gRPC-Web". */
  readonly title: string;
  /**
   * The recording server's port its calls arrive on: the gRPC port (HTTP/2 without TLS) or the HTTP port (HTTP/1.1).
   */
  readonly port: "h2c" | "http1";
  /**
   * On the HTTP port, the content types (lowercased) of its calls of Hello; "rest" for every one no other protocol
   * names.
   */
  readonly contentTypes?: RegExp | "rest";
  /** The request header that carries a call's deadline. */
  readonly deadlineHeader: string;
  /** What a legal server may refuse a call of Hello for, one line each; none for a valid call. */
  problems(call: RecordedCall, maxBodyBytes: number): Promise<string[]>;
  /** On the HTTP port: answers a POST of Hello as a legal server of the protocol does, with the scenario's answer. */
  answerHttp1?(call: RecordedCall, res: ServerResponse, ask: HelloAsk): Promise<void>;
  /**
   * On the gRPC port: answers a call as a legal server of the protocol does: with the refusal given (a body past the
   * bound, no procedure at its path, no key), else with the scenario's answer to its Hello.
   */
  answerH2c?(
    call: RecordedCall,
    stream: ServerHttp2Stream,
    ask: HelloAsk,
    refusal?: { code: number; message: string },
  ): Promise<void>;
}

/** What a protocol's recording side asks of the recording server while it answers a call of Hello. */
export interface HelloAsk {
  /**
   * The scenario's answer to the call's Message (undefined: no one well-formed Message), held as it says; undefined
   * when the client gave up.
   */
  answer(codec: Codec, body: string | undefined): Promise<HelloAnswer | undefined>;
  /** Records what the server answered, in words, where the protocol says more than the status ("415"). */
  said(words: string): void;
  /** A status code's name, as the record writes it: "UNAVAILABLE". */
  statusName(code: number): string;
  /** Bytes a body may inflate to. */
  readonly maxBodyBytes: number;
}

/**
 * What a target answered a protocol's set-up probe: the protocol (an error of it included), something else, or nothing.
 */
export type ProbeAnswer = { speaks: true } | { speaks: false; answered: string; noReply?: boolean };

export interface SpeaksProbe {
  /** The protocol's name as a user writes it: "gRPC", "Connect". */
  readonly spoken: string;
  /** What the probe sends and what it counts as the protocol's reply, for the line that refuses a target. */
  readonly expected: string;
  ask(transport: Pick<UnaryTransport, "raw" | "exchange">, timeoutMs: number): Promise<ProbeAnswer>;
}
