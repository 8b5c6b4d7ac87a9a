// Builds the GrpcTarget that checks use: both clients behind one budget, and a reachability probe.
import net from "node:net";
import tls from "node:tls";
import { ConformanceError } from "../errors.js";
import { isLocal, parseAddress } from "./address.js";
import { CallBudget } from "./budget.js";
import { loadTls, type ConnectionOptions, type TlsOptions } from "./connection.js";
import { GrpcJsClient } from "./grpc-js-client.js";
import { Status, type GrpcTarget } from "./grpc-target.js";
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
  /** Why the target cannot serve gRPC at all (see probeHandshake): every call then fails at once with it. */
  unusable?: string;
}

export const DEFAULT_TIMEOUT_MS = 5000;
export const DEFAULT_MAX_CALLS = 10_000;
export const DEFAULT_REMOTE_RATE = 50;
/** Calls in a row with no complete answer within the timeout, after which the target counts as no longer answering. */
export const SILENT_CALLS_LIMIT = 3;

export function createGrpcTarget(options: GrpcTargetOptions): GrpcTarget & { budget: CallBudget } {
  const address = parseAddress(options.address);
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
  const client = new GrpcJsClient(conn, material);
  // A target that stopped answering would make every later check wait out its timeout; after a few silent
  // calls in a row the rest fail at once, with the reason.
  let silent = 0;
  const guard = async <T>(call: () => Promise<T>, wasSilent: (result: T) => boolean): Promise<T> => {
    if (options.unusable !== undefined) throw new ConformanceError("unreachable", `${options.address} does not speak HTTP/2: ${options.unusable}`);
    if (silent >= SILENT_CALLS_LIMIT) {
      throw new ConformanceError("unreachable", `${options.address} stopped answering: ${silent} calls in a row got no answer within ${conn.timeoutMs} ms`);
    }
    const result = await call();
    silent = wasSilent(result) ? silent + 1 : 0;
    return result;
  };
  return {
    address: options.address,
    budget,
    get callCount() {
      return budget.used;
    },
    async unary(request, callOptions) {
      await budget.take();
      const started = performance.now();
      const deadline = callOptions?.deadlineMs ?? conn.timeoutMs;
      return guard(
        () => client.unary(request, callOptions),
        // A call that runs to its deadline got no usable answer, whether or not headers came first.
        (r) => r.code === Status.DEADLINE_EXCEEDED && performance.now() - started >= deadline,
      );
    },
    async raw(request) {
      await budget.take();
      return guard(
        () => sendRaw(conn, material, request),
        (r) => r.failure?.kind === "timeout" && r.httpStatus === undefined,
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

export async function probeReachable(options: GrpcTargetOptions, flag = "--grpc"): Promise<void> {
  const address = parseAddress(options.address, flag);
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
