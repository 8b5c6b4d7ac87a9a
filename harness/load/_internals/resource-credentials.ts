// Before `load --http` sends its mix: check's own credentials probe (harness/targets/http-credentials.ts), spoken
// over the load run's wire (TLS, authority, the key where it is placed), so that a target that wants a key not
// given, or refuses the one given, ends the command with exit 5 before the run, in check's words.
import { ConformanceError } from "../../errors.js";
import { probeHttpCredentials } from "../../targets/http-credentials.js";
import type { ApiKeyPlacement, HttpRequest, HttpResponse, HttpTarget } from "../../targets/http-target.js";
import { boundedExchange, openPool, type HttpWire } from "./http-rpc-call.js";

export interface ResourceCredentialsOptions {
  /** The run's wire, the key placed as the run places it. */
  wire: HttpWire;
  /** The same wire with the key in another placement (to say where a refused key is taken). */
  wireFor(placement: ApiKeyPlacement): HttpWire;
  timeoutMs: number;
  keyGiven: boolean;
  placement: ApiKeyPlacement;
}

/** An HttpTarget over one keep-alive connection: what the probe needs of one (request), and no more. */
function probeTarget(collection: URL, wire: HttpWire, timeoutMs: number, unreachable: boolean): HttpTarget {
  const pool = openPool(collection, 1, wire);
  let calls = 0;
  return {
    baseUrl: collection.origin,
    get callCount() {
      return calls;
    },
    async request(req: HttpRequest): Promise<HttpResponse> {
      calls++;
      const body = req.body === undefined ? undefined : Buffer.from(req.body);
      const headers = { ...req.headers, ...(body && { "content-length": String(body.length) }) };
      const r = await boundedExchange(
        pool,
        collection,
        req.method,
        req.path,
        headers,
        body,
        req.timeoutMs ?? timeoutMs,
        wire,
      );
      if (typeof r === "string") {
        // The first target's exchange that gets no answer: the target cannot be reached (exit 3), not refusing.
        if (unreachable) throw new ConformanceError("unreachable", `cannot reach ${collection.href}: ${r}`);
        return {
          status: 0,
          statusText: "",
          headers: {},
          body: new Uint8Array(),
          text: "",
          failure: { kind: "connection", message: r },
        };
      }
      return { status: r.status, statusText: "", headers: r.headers, body: r.body, text: r.body.toString("utf8") };
    },
    curl: () => "",
    async close() {
      pool.close();
    },
  };
}

/** Throws a credentials error (exit 5) when the target wants a key it was not given or refuses the given one. */
export async function probeResourceCredentials(
  collectionUrl: string,
  options: ResourceCredentialsOptions,
): Promise<void> {
  const collection = new URL(collectionUrl);
  const target = probeTarget(collection, options.wire, options.timeoutMs, true);
  try {
    await probeHttpCredentials(target, {
      collection: collection.pathname,
      keyGiven: options.keyGiven,
      placement: options.placement,
      withPlacement: (placement) => probeTarget(collection, options.wireFor(placement), options.timeoutMs, false),
    });
  } finally {
    await target.close();
  }
}
