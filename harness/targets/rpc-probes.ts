// The probes that refuse an RPC target before any check runs: nothing listening, no HTTP/2 where gRPC needs it,
// credentials wanted and not given. Each is exit 3 or 5 with one line, never a verdict.
import net from "node:net";
import { encodeMessage } from "../../contract/message.js";
import { ConformanceError } from "../errors.js";
import { probeHandshake } from "../protocols/grpc/index.js";
import { resolveGrpcTarget, type GrpcTargetOptions } from "../run-config.js";
import { parseAddress } from "./address.js";
import { loadTls, type TlsOptions } from "./connection.js";
import type { GrpcTarget } from "./grpc-target.js";
import { Status, statusName } from "../protocols/rpc.js";
import { describeTlsFailure, isTlsError } from "./tls-failure.js";
import { endpointOf, moduleOf } from "./rpc-endpoint.js";
import { http1Answer } from "./http1-probe.js";
import { openTls } from "../wire/tls.js";

function servernameOf(options: GrpcTargetOptions, address: ReturnType<typeof parseAddress>): string {
  return (options.authority ?? (address.kind === "tcp" ? address.host : "localhost")).replace(/:\d+$/, "");
}

/** The run's TLS files for this target, {} for the system roots, undefined for plaintext. */
function tlsOptionsOf(options: GrpcTargetOptions): TlsOptions | undefined {
  return options.tls === undefined || options.tls === false ? undefined : options.tls === true ? {} : options.tls;
}

function tlsMaterialOf(options: GrpcTargetOptions) {
  const files = tlsOptionsOf(options);
  return files !== undefined ? loadTls(files) : undefined;
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
  // gRPC needs HTTP/2; Connect and gRPC-Web may be served over HTTP/1.1 (a proxy without http2 on its listener), and a
  // server that speaks only HTTP/1.1 may refuse a handshake that offers h2 alone.
  const alpn = moduleOf(options.protocol).needsHttp2Handshake ? ["h2"] : ["h2", "http/1.1"];
  const plaintextFix = options.address.startsWith("https://") ? "use http://" : "leave --tls out";
  await new Promise<void>((resolve, reject) => {
    const endpoint = address.kind === "unix" ? { path: address.path } : { host: address.host, port: address.port };
    const socket = useTls
      ? openTls(endpoint, { material, serverName: servernameOf(options, address), alpn })
      : net.connect(endpoint);
    let tcpUp = false;
    socket.once("connect", () => (tcpUp = true));
    const fail = (cause: string) => {
      socket.destroy();
      reject(new ConformanceError("unreachable", `cannot reach ${options.address}: ${cause}`));
    };
    socket.setTimeout(timeoutMs, () => fail(`no connection within ${timeoutMs} ms`));
    socket.once("error", (err: NodeJS.ErrnoException) =>
      fail(
        useTls && (tcpUp || isTlsError(err))
          ? describeTlsFailure(err, tlsOptionsOf(options), plaintextFix)
          : connectError(err),
      ),
    );
    socket.once(useTls ? "secureConnect" : "connect", () => {
      socket.destroy();
      resolve();
    });
  });
}

/** One line for a connection that failed before any TLS. */
function connectError(err: NodeJS.ErrnoException): string {
  const first = (err.message.split("\n")[0] ?? "").trim();
  return err.code ? `${err.code} (${first})` : first;
}

/**
 * Refuses, before any check runs, a target that does not speak HTTP/2 (an HTTP/1 port, TLS where plaintext was
 * asked, silence): nothing could be judged there, so it is exit 3 with one line naming what it does speak, never a
 * verdict. Connect and gRPC-Web may be served over HTTP/1.1, and an in-memory target has no socket: only gRPC is
 * probed.
 */
export async function assertSpeaksGrpc(options: GrpcTargetOptions, flag = "--grpc"): Promise<void> {
  if (options.inMemory || !moduleOf(options.protocol).needsHttp2Handshake) return;
  const reason = await probeGrpcHandshake(options);
  // A TLS failure (a client certificate refused after the handshake, in TLS 1.3) is no sign of HTTP/1: say it as TLS.
  if (reason?.startsWith("TLS: ") === true)
    throw new ConformanceError("unreachable", `cannot reach ${options.address}: ${reason}`);
  if (reason !== undefined)
    throw new ConformanceError("unreachable", `${flag} ${options.address} does not speak HTTP/2: ${reason}`);
}

/**
 * Refuses, before any check runs, a target that answers in another protocol than its flag names (a gRPC flag at an
 * HTTP/2 JSON server, a Connect flag at a plain HTTP server or at an HTTP/2-only gRPC port): one call of Hello, as the
 * protocol's module asks it, and exit 3 with one line naming the flag, the address, what was expected and what came.
 * An error of the protocol itself (unimplemented, say) is that protocol spoken: the checks judge it.
 */
export async function assertSpeaksProtocol(
  target: Pick<GrpcTarget, "raw" | "exchange">,
  options: GrpcTargetOptions,
  flag?: string,
): Promise<void> {
  const module = moduleOf(options.protocol);
  if (options.inMemory || module.speaks === undefined) return;
  const { timeoutMs } = resolveGrpcTarget(options);
  const answer = await module.speaks.ask(target, timeoutMs);
  if (answer.speaks) return;
  const answered =
    answer.noReply === true ? ((await whatAnswersHttp1(options, timeoutMs)) ?? answer.answered) : answer.answered;
  throw new ConformanceError(
    "unreachable",
    `${flag ?? module.cli.flag} ${options.address} does not speak ${module.speaks.spoken}: expected ` +
      `${module.speaks.expected}; got ${answered}`,
  );
}

/** For a protocol over a base URL that got no HTTP/1.1 reply: what the target sends instead (HTTP/2 frames, TLS). */
async function whatAnswersHttp1(options: GrpcTargetOptions, timeoutMs: number): Promise<string | undefined> {
  const { address, url } = endpointOf(options);
  if (url === undefined || address.kind !== "tcp") return undefined;
  const secure = url.protocol === "https:";
  return http1Answer({
    host: address.host,
    port: address.port,
    path: url.pathname,
    timeoutMs,
    ...(secure && { tls: tlsMaterialOf(options) ?? loadTls({}) }),
  });
}

/** Undefined when the target completes an HTTP/2 handshake within the timeout; else why it cannot serve gRPC. */
export function probeGrpcHandshake(options: GrpcTargetOptions): Promise<string | undefined> {
  const address = parseAddress(options.address);
  const material = tlsMaterialOf(options);
  const files = tlsOptionsOf(options);
  return probeHandshake({
    address,
    ...(material && { tls: material }),
    ...(files !== undefined && {
      describeTls: (err: NodeJS.ErrnoException) => describeTlsFailure(err, files, "leave --tls out"),
    }),
    ...(files?.certFile !== undefined && {
      closedAfterTls:
        `TLS: the server closed the connection right after the handshake, before any byte: did it refuse the ` +
        `client certificate in --cert ${files.certFile}? (TLS 1.3 refuses one after the handshake)`,
    }),
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
      : `cannot check: the target refused the credentials given (--metadata ${given.join(", ")}): every call got ` +
          `${got}`,
  );
}
