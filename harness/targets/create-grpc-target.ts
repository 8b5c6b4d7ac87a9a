// Builds the GrpcTarget that checks use: the protocol's transport (chosen from PROTOCOLS) behind the run's budget and
// the guards of guards.ts, and the probes that refuse a target before any check runs.
import net from "node:net";
import tls from "node:tls";
import { ConformanceError } from "../errors.js";
import { encodeMessage } from "../../contract/message.js";
import { PROTOCOL_NAMES, protocolModule, type Protocol, type ProtocolModule, type UnaryTransport } from "../protocols/index.js";
import { probeHandshake } from "../protocols/grpc/index.js";
import { isLocal, parseAddress, type ParsedAddress } from "./address.js";
import type { InMemoryClient } from "./in-memory-client.js";
import { CallBudget } from "./budget.js";
import { loadTls, type ConnectionOptions, type TlsOptions } from "./connection.js";
import { createSilenceGuard, withCrowdingGuard } from "./guards.js";
import { Status, statusName, type GrpcTarget, type PlainRequest } from "./grpc-target.js";

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
  protocol?: Protocol | (string & {});
  /** A target with no socket (see in-memory-client.ts): it answers every call, and address is only its name. */
  inMemory?: InMemoryClient;
}

export const DEFAULT_TIMEOUT_MS = 5000;
export const DEFAULT_MAX_CALLS = 10_000;
export const DEFAULT_REMOTE_RATE = 50;
export { SILENT_CALLS_LIMIT } from "./guards.js";

/** Where an RPC target is: its address, and for a protocol over HTTP the base URL its procedures hang from. */
export function endpointOf(options: Pick<GrpcTargetOptions, "address" | "protocol">, flag?: string): { address: ParsedAddress; url?: URL } {
  const module = moduleOf(options.protocol);
  return module.endpoint(options.address, flag ?? module.cli.flag);
}

/** The module of a protocol name (default gRPC); exit 2 naming the known ones when there is none. */
function moduleOf(name = "grpc"): ProtocolModule {
  const module = protocolModule(name);
  if (!module) throw new ConformanceError("usage", `no protocol named ${name}: one of ${PROTOCOL_NAMES.join(", ")}`);
  return module;
}

export function createGrpcTarget(options: GrpcTargetOptions): GrpcTarget & { budget: CallBudget } {
  const { module, address, url } = resolveEndpoint(options);
  const protocol = options.inMemory?.protocol ?? module.name;
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
  const transport: UnaryTransport = options.inMemory ?? module.createTransport({ conn, ...(url && { url }), ...(material && { tls: material }) });
  return guardedTarget({ address: options.address, protocol, transport, budget, timeoutMs: conn.timeoutMs, metadata: conn.metadata });
}

/** The protocol module of the options, and where its target is; an in-memory target counts as this machine. */
function resolveEndpoint(options: GrpcTargetOptions): { module: ProtocolModule; address: ParsedAddress; url?: URL } {
  const module = moduleOf(options.protocol);
  if (options.inMemory) return { module, address: parseAddress("127.0.0.1:1") };
  return { module, ...endpointOf(options) };
}

interface GuardedTargetOptions {
  address: string;
  protocol: string;
  transport: UnaryTransport;
  budget: CallBudget;
  timeoutMs: number;
  metadata: Readonly<Record<string, string>>;
}

/** The target checks see: the transport behind the run's budget, the silence guard and the crowding guard. */
function guardedTarget({ address, protocol, transport, budget, timeoutMs, metadata }: GuardedTargetOptions): GrpcTarget & { budget: CallBudget } {
  const silence = createSilenceGuard({ address, timeoutMs, resend: (request) => transport.unary(request, { channel: "fresh" }) });
  const call = withCrowdingGuard(silence.intercept((request, callOptions) => transport.unary(request, callOptions)), (signal) => budget.take(signal));
  const { exchange, raw } = transport;
  return {
    address,
    protocol,
    ...(exchange && {
      async exchange(request: PlainRequest) {
        await budget.take();
        return exchange({ ...request, headers: { ...metadata, ...request.headers } });
      },
    }),
    budget,
    get callCount() {
      return budget.used;
    },
    async unary(request, callOptions) {
      const result = await call(request, callOptions);
      silence.served(request, callOptions, result);
      return result;
    },
    async raw(request) {
      if (!raw) throw new Error(`hand-built HTTP/2 requests are gRPC's; this target speaks ${protocol}`);
      await budget.take();
      const body = request.body instanceof Uint8Array ? request.body : request.body?.[0]?.data;
      // A reset is an answer (a refusal); a connection that failed or a stream that never answered is none.
      return silence.run(body, () => raw(request), (r) => r.httpStatus === undefined && (r.failure?.kind === "timeout" || r.failure?.kind === "connection"));
    },
    async close() {
      transport.close();
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
  if (options.inMemory || !moduleOf(options.protocol).needsHttp2Handshake) return;
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
