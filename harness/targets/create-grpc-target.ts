// Builds the GrpcTarget that checks use: the protocol's transport (chosen from PROTOCOLS) behind the run's budget, the
// guards of guards.ts and the backpressure policy of backpressure.ts. It takes resolved options (harness/run-config.ts)
// and defaults nothing.
import { CONNECT } from "../protocols/connect/index.js";
import type { UnaryTransport } from "../protocols/index.js";
import { resolveGrpcTarget, type GrpcTargetOptions, type ResolvedGrpcTarget } from "../run-config.js";
import { parseAddress } from "./address.js";
import { BackpressureLog, pushbackWait, waitOut, type AskedWait } from "./backpressure.js";
import { CallBudget } from "./budget.js";
import { loadTls, type ConnectionOptions } from "./connection.js";
import { createSilenceGuard, withCrowdingGuard } from "./guards.js";
import type { GrpcTarget } from "./grpc-target.js";
import type { PlainRequest, RawResponse } from "../protocols/rpc.js";
import { endpointOf, moduleOf } from "./rpc-endpoint.js";

export { endpointOf };

/** A target from options as given: resolved (harness/run-config.ts), then opened. */
export function createGrpcTarget(options: GrpcTargetOptions): GrpcTarget & { budget: CallBudget } {
  return openGrpcTarget(resolveGrpcTarget(options));
}

/** A target from resolved options: the protocol's transport behind the budget and the guards. */
export function openGrpcTarget(
  options: ResolvedGrpcTarget,
  log = new BackpressureLog(),
): GrpcTarget & { budget: CallBudget } {
  const module = moduleOf(options.protocol);
  // An in-memory target has no address and no wire.
  const { address, url } = options.inMemory
    ? { address: parseAddress("127.0.0.1:1"), url: undefined }
    : endpointOf(options);
  const tlsOptions = options.tls === true ? {} : options.tls === false ? undefined : options.tls;
  const material = tlsOptions ? loadTls(tlsOptions) : undefined;
  const conn: ConnectionOptions = {
    address,
    display: options.address,
    ...(tlsOptions && { tls: tlsOptions }),
    ...(options.authority !== undefined && { authority: options.authority }),
    metadata: options.metadata,
    timeoutMs: options.timeoutMs,
  };
  const budget = options.budget ?? new CallBudget({ maxCalls: options.maxCalls, rate: options.rate });
  const transport: UnaryTransport =
    options.inMemory ?? module.createTransport({ conn, ...(url && { url }), ...(material && { tls: material }) });
  const protocol = options.inMemory?.protocol ?? module.name;
  return guardedTarget({
    address: options.address,
    protocol,
    transport,
    budget,
    timeoutMs: conn.timeoutMs,
    metadata: conn.metadata,
    log,
  });
}

interface GuardedTargetOptions {
  address: string;
  protocol: string;
  transport: UnaryTransport;
  budget: CallBudget;
  timeoutMs: number;
  metadata: Readonly<Record<string, string>>;
  /** Where waits asked with a pushback are counted, and refusals past their bound noted. */
  log: BackpressureLog;
}

/**
 * gRPC's pushback (gRFC A6), which gRPC-Web carries in the same trailers. The Connect protocol defines no retry signal
 * of its own ("clients must exercise judgment"): a Connect answer always stands.
 */
const honoursPushback = (protocol: string): boolean => protocol !== CONNECT;

/** The status of a hand-built exchange: grpc-status of its trailers (of its one header block when trailers-only). */
function rawCode(r: RawResponse): number | undefined {
  const value = r.trailers["grpc-status"]?.[0] ?? r.headers["grpc-status"]?.[0];
  return value !== undefined && /^\d{1,2}$/.test(value) ? Number(value) : undefined;
}

// A reset is an answer (a refusal); a connection that failed or a stream that never answered is none.
const rawTimedOut = (r: RawResponse) => r.httpStatus === undefined && r.failure?.kind === "timeout";
const rawUnanswered = (r: RawResponse) =>
  rawTimedOut(r) || (r.httpStatus === undefined && r.failure?.kind === "connection");

/** The wait a hand-built call's answer asks for (RESOURCE_EXHAUSTED with a pushback), if any. */
const rawAskedWait = (r: RawResponse): AskedWait | undefined => {
  const code = rawCode(r);
  return code === undefined ? undefined : pushbackWait(code, r.trailers, r.headers);
};

/**
 * The target checks see: the transport behind the run's budget, the silence guard and the crowding guard; around them
 * a pushback is waited out (unary and hand-built calls; the plain exchanges of the wire checks are sent as given).
 */
function guardedTarget({
  address,
  protocol,
  transport,
  budget,
  timeoutMs,
  metadata,
  log,
}: GuardedTargetOptions): GrpcTarget & { budget: CallBudget } {
  const silence = createSilenceGuard({
    address,
    timeoutMs,
    resend: (request) => transport.unary(request, { channel: "fresh" }),
  });
  const call = withCrowdingGuard(
    silence.intercept((request, callOptions) => transport.unary(request, callOptions)),
    (signal) => budget.take(signal),
  );
  const { exchange, raw, openAhead } = transport;
  const pushback = honoursPushback(protocol);
  // A call whose check judges the refusal (a body past a size limit, say) gets its answer as sent.
  const waiting = <T>(
    send: () => Promise<T>,
    askedWait: (answer: T) => AskedWait | undefined,
    refusalJudged: boolean | undefined,
    signal?: AbortSignal,
  ) =>
    !pushback || refusalJudged === true
      ? send()
      : waitOut({ send, askedWait, log, target: address, ...(signal && { signal }) });
  return {
    address,
    protocol,
    ...(exchange && {
      async exchange(request: PlainRequest) {
        await budget.take();
        return exchange({ ...request, headers: { ...metadata, ...request.headers } });
      },
    }),
    ...(openAhead && { openAhead: (count: number, limit: number) => openAhead(count, limit) }),
    budget,
    get callCount() {
      return budget.used;
    },
    async unary(request, callOptions) {
      const once = async () => {
        const result = await call(request, { ...callOptions, deadlineMs: callOptions?.deadlineMs ?? timeoutMs });
        silence.served(request, callOptions, result);
        return result;
      };
      return waiting(
        once,
        (r) => pushbackWait(r.code, r.trailers, r.headers),
        callOptions?.refusalJudged,
        callOptions?.signal,
      );
    },
    async raw(request) {
      if (!raw) throw new Error(`hand-built HTTP/2 requests are gRPC's; this target speaks ${protocol}`);
      const body = request.body instanceof Uint8Array ? request.body : request.body?.[0]?.data;
      const once = async () => (await budget.take(), silence.run(body, () => raw(request), rawUnanswered, rawTimedOut));
      return waiting(once, rawAskedWait, request.refusalJudged, request.signal);
    },
    async close() {
      transport.close();
    },
  };
}
