// What one check sent its targets: exchanges, bytes and round trips, counted where every call of the check passes
// (bound() in session.ts), so that a memoised probe's calls count for the check that started it.

/** A check's traffic, as the JSON report carries it (`traffic` of each check). */
export interface CheckTraffic {
  /** Calls and requests the check made: gRPC calls (grpc-js or hand-built), Connect, gRPC-Web and HTTP requests. */
  exchanges: number;
  /**
   * Request bytes it handed its calls: messages as framed on the wire (5-byte prefix each) or request bodies; no
   * headers. A body the server refused before reading it counts whole, though only a window of it went out.
   */
  bytesSent: number;
  /** Sequential waves: how many times its count of exchanges in flight went from 0 to 1 (pipelined ones share one). */
  roundTrips: number;
}

export interface TrafficCounter {
  readonly traffic: Readonly<CheckTraffic>;
  /** Counts one exchange of `bytes` around `call`, in flight until it settles. */
  around<T>(bytes: number, call: () => Promise<T>): Promise<T>;
}

export function createTrafficCounter(): TrafficCounter {
  const traffic: CheckTraffic = { exchanges: 0, bytesSent: 0, roundTrips: 0 };
  let inFlight = 0;
  return {
    traffic,
    around(bytes, call) {
      traffic.exchanges++;
      traffic.bytesSent += bytes;
      if (inFlight++ === 0) traffic.roundTrips++;
      const done = () => void inFlight--;
      let pending: Promise<unknown>;
      try {
        pending = call();
      } catch (err) {
        done();
        throw err;
      }
      return pending.finally(done) as ReturnType<typeof call>;
    },
  };
}

type Frames = readonly { data: Uint8Array }[];
const lengthOf = (body: unknown): number =>
  body === undefined
    ? 0
    : typeof body === "string"
      ? Buffer.byteLength(body)
      : body instanceof Uint8Array
        ? body.byteLength
        : (body as Frames).reduce((n, f) => n + 5 + f.data.byteLength, 0);

/**
 * The request bytes of a target method's arguments: unary(bytes), raw({ body }), exchange({ body }), request({ body }).
 */
export function requestBytes(method: string, args: readonly unknown[]): number {
  // A unary message goes out with its 5-byte length prefix (gRPC, gRPC-Web; Connect sends it bare: close enough to
  // count).
  if (method === "unary") return 5 + ((args[0] as Uint8Array | undefined)?.byteLength ?? 0);
  return lengthOf((args[0] as { body?: unknown } | undefined)?.body);
}
