// The probes that refuse an RPC target before any check runs: nothing listening, no HTTP/2 where gRPC needs it,
// credentials wanted and not given. Each is exit 3 or 5 with one line, never a verdict.
import net from "node:net";
import tls from "node:tls";
import { encodeMessage } from "../../contract/message.js";
import { ConformanceError } from "../errors.js";
import { probeHandshake } from "../protocols/grpc/index.js";
import { resolveGrpcTarget, type GrpcTargetOptions } from "../run-config.js";
import { parseAddress } from "./address.js";
import { loadTls, type TlsOptions } from "./connection.js";
import { Status, statusName, type GrpcTarget } from "./grpc-target.js";
import { endpointOf, moduleOf } from "./rpc-endpoint.js";

function servernameOf(options: GrpcTargetOptions, address: ReturnType<typeof parseAddress>): string {
  return (options.authority ?? (address.kind === "tcp" ? address.host : "localhost")).replace(/:\d+$/, "");
}

function tlsMaterialOf(options: GrpcTargetOptions) {
  const useTls = options.tls !== undefined && options.tls !== false;
  return useTls ? loadTls(options.tls === true ? {} : (options.tls as TlsOptions)) : undefined;
}

/**
 * Opens one TCP (and TLS) connection to the target and closes it: exit 3 with the address and the cause when
 * nothing answers, before any check runs.
 */
export async function probeReachable(options: GrpcTargetOptions, flag?: string): Promise<void> {
  const { address } = endpointOf(options, flag);
  const { timeoutMs } = resolveGrpcTarget(options);
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

/** Undefined when the target completes an HTTP/2 handshake within the timeout; else why it cannot serve gRPC. */
export function probeGrpcHandshake(options: GrpcTargetOptions): Promise<string | undefined> {
  const address = parseAddress(options.address);
  const material = tlsMaterialOf(options);
  return probeHandshake({
    address,
    ...(material && { tls: material }),
    servername: servernameOf(options, address),
    timeoutMs: resolveGrpcTarget(options).timeoutMs,
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
