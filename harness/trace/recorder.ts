// Keeps the exchanges of each check while it runs, within bounds: the clients report each exchange to the sink its
// call was given (the session hands a traced check's sink to every call it makes, as it hands the check's signal).
import type { ExchangeRecord, TraceSink } from "./exchange-record.js";

export interface TraceLimits {
  /** Bytes of one body (request or response) kept; the rest is cut, and the trace says how much. */
  maxBodyBytes: number;
  /** Exchanges kept per check: the last ones, the earlier counted. */
  maxExchanges: number;
  /** Bytes of trace files written in one run; past it a check's file keeps only its newest exchanges, or none. */
  maxRunBytes: number;
}

export const DEFAULT_TRACE_LIMITS: TraceLimits = {
  maxBodyBytes: 64 * 1024,
  maxExchanges: 64,
  maxRunBytes: 32 * 1024 * 1024,
};

/** A body as kept: its first bytes, and its whole length. */
export interface KeptBody {
  bytes: Uint8Array;
  size: number;
}

/** An exchange as kept: bodies cut to the bound, and copied, so a large buffer of the target's is not held. */
export type KeptExchange = Omit<ExchangeRecord, "request" | "response"> & {
  request: Omit<ExchangeRecord["request"], "body"> & { body?: KeptBody };
  response?: Omit<NonNullable<ExchangeRecord["response"]>, "body"> & { body?: KeptBody };
};

/** The exchanges of one check. */
export class CheckTrace {
  readonly exchanges: KeptExchange[] = [];
  /** Exchanges recorded before the ones kept, left out by the bound. */
  dropped = 0;

  constructor(readonly limits: Pick<TraceLimits, "maxBodyBytes" | "maxExchanges">) {}

  add(record: ExchangeRecord): void {
    const keep = (b: Uint8Array | readonly Uint8Array[] | undefined): KeptBody | undefined => {
      if (b === undefined) return undefined;
      const pieces = b instanceof Uint8Array ? [b] : b;
      const size = pieces.reduce((n, p) => n + p.length, 0);
      const bytes = new Uint8Array(Math.min(size, this.limits.maxBodyBytes));
      let at = 0;
      for (const p of pieces) {
        if (at >= bytes.length) break;
        const take = p.subarray(0, bytes.length - at);
        bytes.set(take, at);
        at += take.length;
      }
      return { bytes, size };
    };
    const { request, response, ...rest } = record;
    const { body: reqBody, ...reqRest } = request;
    const kept: KeptExchange = {
      ...rest,
      request: { ...reqRest, ...(reqBody && { body: keep(reqBody) as KeptBody }) },
    };
    if (response) {
      const { body: resBody, ...resRest } = response;
      kept.response = { ...resRest, ...(resBody && { body: keep(resBody) as KeptBody }) };
    }
    this.exchanges.push(kept);
    if (this.exchanges.length > this.limits.maxExchanges) {
      this.exchanges.shift();
      this.dropped++;
    }
  }
}

/** The sink that keeps a check's exchanges in trace. A fault in building a record never fails the exchange. */
export function sinkOf(trace: CheckTrace): TraceSink {
  return (make) => {
    try {
      trace.add(make());
    } catch {
      // The evidence is lost; the verdict is not.
    }
  };
}
