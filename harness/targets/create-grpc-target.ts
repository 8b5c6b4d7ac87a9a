// Builds the GrpcTarget that checks use: both clients behind one budget, and a reachability probe.
import net from "node:net";
import tls from "node:tls";
import { ConformanceError } from "../errors.js";
import { decodeMessage, encodeMessage, hex } from "../../contract/message.js";
import { createLimiter } from "../limiter.js";
import type { Protocol } from "../check.js";
import { isLocal, parseAddress, parseRpcUrl, type ParsedAddress } from "./address.js";
import { HttpRpcClient, type PlainRequest } from "./http-rpc-client.js";
import type { InMemoryClient } from "./in-memory-client.js";
import { CallBudget } from "./budget.js";
import { loadTls, type ConnectionOptions, type TlsOptions } from "./connection.js";
import { GrpcJsClient, HELLO_PATH } from "./grpc-js-client.js";
import { droppedBeforeAnswer, Status, statusName, type GrpcTarget, type UnaryResult } from "./grpc-target.js";
import { probeHandshake } from "./handshake.js";
import { sendRaw } from "./raw-h2.js";

export interface GrpcTargetOptions {
  /** host:port, dns:///host:port or unix:///path. */
  address: string;
  /** TLS: true for the system roots, or files; absent for plaintext. */
  tls?: boolean | TlsOptions;
  authority?: string;
  metadata?: Readonly<Record<string, string>>;
  /** Bound on one call in milliseconds (default 5000). */
  timeoutMs?: number;
  /** Calls allowed for the whole run (default 10,000). */
  maxCalls?: number;
  /** Calls per second (default: no limit on this machine, 50 elsewhere). */
  rate?: number;
  /** Shared across a target and its replicas, so the budget covers the whole run. */
  budget?: CallBudget;
  /** The protocol to speak (default gRPC); for Connect and gRPC-Web, address is the base URL http(s)://host:port[/prefix]. */
  protocol?: Protocol;
  /** A target with no socket (see in-memory-client.ts): it answers every call, and address is only its name. */
  inMemory?: InMemoryClient;
}

export const DEFAULT_TIMEOUT_MS = 5000;
export const DEFAULT_MAX_CALLS = 10_000;
export const DEFAULT_REMOTE_RATE = 50;
/** Calls in a row with no complete answer within the timeout, after which the target counts as no longer answering. */
export const SILENT_CALLS_LIMIT = 3;
/** Times a call refused or dropped beside other calls is sent again, one call at a time. */
const CROWDED_RETRIES = 3;

/** Where an RPC target is: its address, and for a protocol over HTTP the base URL its procedures hang from. */
export function endpointOf(options: Pick<GrpcTargetOptions, "address" | "protocol">, flag?: string): { address: ParsedAddress; url?: URL } {
  const protocol = options.protocol ?? "grpc";
  if (protocol === "grpc") return { address: parseAddress(options.address, flag) };
  return parseRpcUrl(options.address, flag ?? `--${protocol}`);
}

export function createGrpcTarget(options: GrpcTargetOptions): GrpcTarget & { budget: CallBudget } {
  const protocol = options.inMemory?.protocol ?? options.protocol ?? "grpc";
  // An in-memory target has no address: it counts as this machine (no rate limit by default).
  const { address, url } = options.inMemory ? { address: parseAddress("127.0.0.1:1"), url: undefined } : endpointOf(options);
  const tlsOptions = options.tls === true ? {} : options.tls === false ? undefined : options.tls;
  const material = tlsOptions ? loadTls(tlsOptions) : undefined;
  const conn: ConnectionOptions = {
    address,
    display: options.address,
    ...(tlsOptions && { tls: tlsOptions }),
    ...(options.authority !== undefined && { authority: options.authority }),
    metadata: options.metadata ?? {},
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  };
  const budget =
    options.budget ??
    new CallBudget({
      maxCalls: options.maxCalls ?? DEFAULT_MAX_CALLS,
      rate: options.rate ?? (isLocal(address) ? Infinity : DEFAULT_REMOTE_RATE),
    });
  const overHttp =
    url && (protocol === "connect" || protocol === "grpc-web")
      ? new HttpRpcClient(protocol, {
          baseUrl: url,
          metadata: conn.metadata,
          timeoutMs: conn.timeoutMs,
          ...(material && { tls: material }),
          ...(options.authority !== undefined && { authority: options.authority }),
        })
      : undefined;
  const client: Pick<GrpcJsClient, "unary" | "close"> = options.inMemory ?? overHttp ?? new GrpcJsClient(conn, material);
  // A target that stopped answering would make every later check wait out its timeout. After a few silent calls
  // in a row, a request it answered before is sent again on a new connection: answered, the silence was those
  // inputs' (a hang on a specific input) and checks go on; unanswered, the rest fail at once, naming the input
  // after which it stopped.
  let silent = 0;
  /** The requests under way when the first of the silent calls came back: one of them may be what stopped the target. */
  let firstSilent: (Uint8Array | undefined)[] = [];
  const underWay = new Set<{ request: Uint8Array | undefined }>();
  /** Small requests the target answered (their bytes), the last few hundred. */
  const answered = new Set<string>();
  const answeredKey = (r: Uint8Array | undefined) => (r === undefined || r.length > 1024 ? "" : hex(r));
  /** The last calls that ended, and when: one that ended while the first silent call was under way is a suspect too. */
  const ended: { request: Uint8Array | undefined; atMs: number }[] = [];
  let knownGood: Uint8Array | undefined;
  let dead: string | undefined;
  const stillAlive = async (): Promise<boolean> => {
    if (!knownGood) return false;
    const r = await client.unary(knownGood, { channel: "fresh" });
    return r.code === Status.OK;
  };
  /** A call whose connection was refused (grpc-js's own words, not the target's). */
  const refused = (r: unknown): boolean =>
    typeof r === "object" && r !== null && "details" in r && typeof r.details === "string" && "code" in r && r.code === Status.UNAVAILABLE && r.details.includes("ECONNREFUSED");
  /** Calls under way, and whether the target has refused a call for the number under way (see unary). */
  const inFlight = new Set<{ crowded: boolean }>();
  let limited = false;
  let largestServed = 0;
  const oneAtATime = createLimiter(1);
  const idlers: (() => void)[] = [];
  /** Resolves once no call is under way. */
  const idle = () => (inFlight.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => idlers.push(resolve)));
  const guard = async <T>(request: Uint8Array | undefined, call: () => Promise<T>, wasSilent: (result: T) => boolean): Promise<T> => {
    if (dead === undefined && silent >= SILENT_CALLS_LIMIT) {
      if (await stillAlive()) silent = 0;
      else if (knownGood) dead = `${options.address} stopped answering after ${describeSuspects(firstSilent)}: ${silent} calls in a row from it on got no answer (none within ${conn.timeoutMs} ms, or a connection refused or dropped), and neither did a request it had answered before`;
      else dead = `${options.address} stopped answering: ${silent} calls in a row got no answer within ${conn.timeoutMs} ms, and it has answered none`;
    }
    if (dead !== undefined) throw new ConformanceError("unreachable", dead);
    const mine = { request };
    const startedMs = performance.now();
    underWay.add(mine);
    let result: T;
    try {
      result = await call();
    } finally {
      underWay.delete(mine);
      ended.push({ request, atMs: performance.now() });
      if (ended.length > 16) ended.shift();
    }
    if (wasSilent(result)) {
      // Calls side by side go silent together when the target dies: which of them killed it cannot be told, so
      // every request then under way is named, this one first.
      // A request the target had answered before is the least likely cause: those come last.
      if (silent++ === 0) {
        const justEnded = ended.filter((e) => e.request !== request && e.atMs >= startedMs).map((e) => e.request);
        const suspects = [request, ...[...underWay].map((u) => u.request), ...justEnded];
        const before = (r: Uint8Array | undefined) => answered.has(answeredKey(r));
        firstSilent = [...suspects.filter((r) => !before(r)), ...suspects.filter(before)];
      }
      // A refused connection is certain, unlike a slow answer: whether the target is gone is asked at once.
      if (refused(result) && !(await stillAlive())) {
        dead = `${options.address} stopped answering after ${describeSuspects(firstSilent)}: connections are refused, and a request it answered before got no answer`;
        // The refusal says nothing of this call's own input: its check is told why instead, once the target had
        // answered before (a first call to a target that never listened gets its own result).
        if (knownGood) throw new ConformanceError("unreachable", dead);
      }
    } else {
      silent = 0;
      // Served, not merely answered: a reset the dying target sent is no alibi.
      const served = typeof result === "object" && result !== null && "code" in result && result.code === Status.OK;
      if (served && answeredKey(request) !== "") answered.add(answeredKey(request));
      if (answered.size > 256) answered.delete(answered.values().next().value as string);
    }
    return result;
  };
  return {
    address: options.address,
    protocol,
    ...(overHttp && {
      async exchange(request: PlainRequest) {
        await budget.take();
        return overHttp.exchange({ ...request, headers: { ...conn.metadata, ...request.headers } });
      },
    }),
    budget,
    get callCount() {
      return budget.used;
    },
    async unary(request, callOptions) {
      const once = async () => {
        await budget.take(callOptions?.signal);
        const started = performance.now();
        const deadline = callOptions?.deadlineMs ?? conn.timeoutMs;
        // Crowded: another call was under way at some moment of this one.
        const mine = { crowded: inFlight.size > 0 };
        for (const other of inFlight) other.crowded = true;
        inFlight.add(mine);
        try {
          const result = await guard(
            request,
            () => client.unary(request, callOptions),
            // A call that runs to its deadline got no usable answer, whether or not headers came first; one whose
            // connection failed or dropped before any header got none either.
            (r) =>
              (r.code === Status.DEADLINE_EXCEEDED && performance.now() - started >= deadline) ||
              droppedBeforeAnswer(r),
          );
          return { result, crowded: mine.crowded };
        } finally {
          inFlight.delete(mine);
          if (inFlight.size === 0) for (const resolve of idlers.splice(0)) resolve();
        }
      };
      // RESOURCE_EXHAUSTED while other calls were in flight may be a legal cap on calls at once, which says nothing
      // of this request; a connection dropped before any answer may have been dropped for another call's input.
      // Either way, from then on the run sends one call at a time, and this one again.
      // A request larger than any served so far is taken at its word: that refusal is most likely a size limit.
      const crowdedOut = (r: UnaryResult) =>
        (r.code === Status.RESOURCE_EXHAUSTED && request.length <= largestServed) || droppedBeforeAnswer(r);
      // Asked again alone, a refusal that stays is this request's own (a body past a size limit, say): the run
      // goes back to calls side by side.
      let { result, crowded } = limited ? await oneAtATime(once) : await once();
      for (let i = 0; i < CROWDED_RETRIES && crowded && crowdedOut(result); i++) {
        const was = limited;
        limited = true;
        ({ result, crowded } = await oneAtATime(async () => (await idle(), once())));
        if (crowdedOut(result) && !crowded) limited = was;
      }
      if (result.code === Status.OK) largestServed = Math.max(largestServed, request.length);
      if (result.code === Status.OK && (callOptions?.path === undefined || callOptions.path === HELLO_PATH) && request.length <= 1024) knownGood = request;
      return result;
    },
    async raw(request) {
      if (protocol !== "grpc") throw new Error(`hand-built HTTP/2 requests are gRPC's; this target speaks ${protocol}`);
      await budget.take();
      const body = request.body instanceof Uint8Array ? request.body : request.body?.[0]?.data;
      return guard(
        body,
        () => sendRaw(conn, material, request),
        // A reset is an answer (a refusal); a connection that failed or a stream that never answered is none.
        (r) => r.httpStatus === undefined && (r.failure?.kind === "timeout" || r.failure?.kind === "connection"),
      );
    },
    async close() {
      client.close();
    },
  };
}

/**
 * Opens one TCP (and TLS) connection to the target and closes it: exit 3 with the address and the cause when
 * nothing answers, before any check runs.
 */
function servernameOf(options: GrpcTargetOptions, address: ReturnType<typeof parseAddress>): string {
  return (options.authority ?? (address.kind === "tcp" ? address.host : "localhost")).replace(/:\d+$/, "");
}

function tlsMaterialOf(options: GrpcTargetOptions) {
  const useTls = options.tls !== undefined && options.tls !== false;
  return useTls ? loadTls(options.tls === true ? {} : (options.tls as TlsOptions)) : undefined;
}

export async function probeReachable(options: GrpcTargetOptions, flag?: string): Promise<void> {
  const { address } = endpointOf(options, flag);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const material = tlsMaterialOf(options);
  const useTls = material !== undefined;
  await new Promise<void>((resolve, reject) => {
    const endpoint = address.kind === "unix" ? { path: address.path } : { host: address.host, port: address.port };
    const servername = servernameOf(options, address);
    const socket = useTls
      ? tls.connect({ ...endpoint, ...material, ALPNProtocols: ["h2"], ...(net.isIP(servername) === 0 && { servername }) })
      : net.connect(endpoint);
    const fail = (cause: string) => {
      socket.destroy();
      reject(new ConformanceError("unreachable", `cannot reach ${options.address}: ${cause}`));
    };
    socket.setTimeout(timeoutMs, () => fail(`no connection within ${timeoutMs} ms`));
    socket.once("error", (err: NodeJS.ErrnoException) => fail(connectError(err, useTls)));
    socket.once(useTls ? "secureConnect" : "connect", () => {
      socket.destroy();
      resolve();
    });
  });
}

/** One line for a failed connection: OpenSSL's messages run over several lines and name source files. */
function connectError(err: NodeJS.ErrnoException, useTls: boolean): string {
  if (err.code === "ERR_SSL_WRONG_VERSION_NUMBER" || err.code === "ERR_SSL_PACKET_LENGTH_TOO_LONG") {
    return `${err.code}: the TLS handshake got an answer that is not TLS (a plaintext server? then leave --tls out)`;
  }
  const first = (err.message.split("\n")[0] ?? "").replace(/:\.\.\/deps\/openssl\S*$/, "").trim();
  const message = useTls && err.code?.startsWith("ERR_SSL") ? `TLS handshake failed: ${first}` : first;
  return err.code ? `${err.code} (${message})` : message;
}

/** Undefined when the target completes an HTTP/2 handshake within the timeout; else why it cannot serve gRPC. */
/**
 * Refuses, before any check runs, a target that does not speak HTTP/2 (an HTTP/1 port, TLS where plaintext was
 * asked, silence): nothing could be judged there, so it is exit 3 with one line naming what it does speak, never a
 * verdict. Connect and gRPC-Web may be served over HTTP/1.1, and an in-memory target has no socket: only gRPC is probed.
 */
export async function assertSpeaksGrpc(options: GrpcTargetOptions, flag = "--grpc"): Promise<void> {
  if ((options.protocol ?? "grpc") !== "grpc" || options.inMemory) return;
  const reason = await probeGrpcHandshake(options);
  if (reason !== undefined) throw new ConformanceError("unreachable", `${flag} ${options.address} does not speak HTTP/2: ${reason}`);
}

export function probeGrpcHandshake(options: GrpcTargetOptions): Promise<string | undefined> {
  const address = parseAddress(options.address);
  const material = tlsMaterialOf(options);
  return probeHandshake({
    address,
    ...(material && { tls: material }),
    servername: servernameOf(options, address),
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
}

/** Requests named when the target stopped answering with several under way; the rest are counted. */
const SUSPECTS_SHOWN = 8;

function describeSuspects(requests: readonly (Uint8Array | undefined)[]): string {
  const distinct = [...new Map(requests.map((r) => [r === undefined ? "" : hex(r), r])).values()];
  if (distinct.length <= 1) return describeRequest(distinct[0]);
  const shown = distinct.slice(0, SUSPECTS_SHOWN).map(describeRequest).join("; ");
  const more = distinct.length > SUSPECTS_SHOWN ? `; and ${distinct.length - SUSPECTS_SHOWN} more` : "";
  return `one of the ${distinct.length} requests under way when it went silent (${shown}${more})`;
}

/** One line naming a request the target got: its body quoted and cut, or its bytes. Our own input, never the target's. */
function describeRequest(request: Uint8Array | undefined): string {
  if (!request) return "a hand-built request";
  const decoded = decodeMessage(request);
  if (!decoded.ok) return `the request bytes ${hex(request.subarray(0, 32))}${request.length > 32 ? "..." : ""}`;
  const q = JSON.stringify(decoded.message.body);
  return `the request with body ${q.length > 80 ? `${q.slice(0, 77)}..."` : q} (${request.length} bytes)`;
}

/**
 * Sends Hello twice without checks' metadata: when both get UNAUTHENTICATED or PERMISSION_DENIED the run cannot
 * judge anything, and ends with that rather than with a list of failures. The two calls count against the budget.
 */
export async function probeCredentials(target: GrpcTarget, options: GrpcTargetOptions): Promise<void> {
  const codes: number[] = [];
  for (const body of ["", "credentials-probe"]) {
    const r = await target.unary(encodeMessage(body), { channel: "fresh" });
    if (r.code !== Status.UNAUTHENTICATED && r.code !== Status.PERMISSION_DENIED) return;
    codes.push(r.code);
  }
  const got = [...new Set(codes.map(statusName))].join(" and ");
  const given = Object.keys(options.metadata ?? {});
  throw new ConformanceError(
    "credentials",
    given.length === 0
      ? `cannot check: the target wants credentials (pass --metadata): every call got ${got}`
      : `cannot check: the target refused the credentials given (--metadata ${given.join(", ")}): every call got ${got}`,
  );
}
