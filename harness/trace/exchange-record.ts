// One exchange with a target as the trace keeps it: what the harness sent and what came back, bytes and all. The
// places where exchanges happen fill it in; nothing else about them is known here.

/** The wire an exchange went over: "http" for HTTP resources, else the name of the protocol module that made it. */
export type TraceProtocol = string;

export type TraceHeaders = Readonly<Record<string, string | number | readonly string[] | undefined>>;

export interface ExchangeRecord {
  protocol: TraceProtocol;
  /** For gRPC: "grpc-js" (the library's view: header blocks and whole messages, not HTTP/2 frames) or "raw-h2". */
  via?: "grpc-js" | "raw-h2";
  /** Epoch milliseconds when the request was sent. */
  startedAt: number;
  durationMs: number;
  request: {
    method: string;
    /** The whole URL; for gRPC, scheme://authority/path. */
    url: string;
    headers: TraceHeaders;
    /** As sent; for gRPC, the length-prefixed body. In pieces when it was sent so: only the bytes kept are copied. */
    body?: Uint8Array | readonly Uint8Array[];
  };
  /** Absent when nothing came back. */
  response?: {
    status?: number;
    statusText?: string;
    headers: TraceHeaders;
    /** As received (for HTTP resources, with its content codings undone); for gRPC, the length-prefixed body. */
    body?: Uint8Array | readonly Uint8Array[];
    /** HTTP/2 trailers (gRPC). */
    trailers?: TraceHeaders;
  };
  /** How the exchange ended when it did not end with a whole response: a timeout, a reset, a dropped connection. */
  failure?: string;
  /**
   * For a grpc-js call: the status grpc-js gave it, which is the target's grpc-status or the library's own (a deadline,
   * a dropped connection).
   */
  clientStatus?: { code: number; details: string };
  /** For a grpc-js Hello call: the call as grpcurl might repeat it. */
  call?: { request: Uint8Array; options: RecordedCallOptions };
}

/**
 * Where a client reports an exchange: given with a call (as its signal is) when the check it belongs to is traced.
 * The record is built only then, so a run without --trace pays nothing for it.
 */
export type TraceSink = (make: () => ExchangeRecord) => void;

/**
 * The options of a recorded grpc-js call that a grpcurl line repeats: UnaryCallOptions less its signal and trace,
 * written out here so that the record does not import the target's interface, which imports this file's TraceSink.
 */
export interface RecordedCallOptions {
  metadata?: Readonly<Record<string, string | Uint8Array>>;
  deadlineMs?: number;
  channel?: "shared" | "fresh";
  path?: string;
}
