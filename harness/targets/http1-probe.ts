// Whether a target answers HTTP/1.1 at all, asked on a socket of its own so that what it sent instead can be named:
// HTTP/2 frames (an HTTP/2-only port, as a gRPC server's is), TLS, other bytes, or nothing.
import net from "node:net";
import type { TlsMaterial } from "./connection.js";
import { readFirstBytes } from "./first-bytes.js";
import { openTls } from "../wire/tls.js";

const FRAME_HEADER = 9;
/** HTTP/2 frame types a server sends first (RFC 9113 §6): SETTINGS, or GOAWAY for a preface it did not get. */
const H2_FRAMES: Readonly<Record<number, string>> = { 4: "SETTINGS", 7: "GOAWAY" };

export interface Http1ProbeOptions {
  host: string;
  port: number;
  /** The request's path (a GET, no body). */
  path: string;
  timeoutMs: number;
  /** For an https:// URL: the run's TLS material; ALPN offers http/1.1 alone. */
  tls?: TlsMaterial;
}

/**
 * Undefined when the target answers a GET with an HTTP/1.x status line, or sends nothing within the bound; else what
 * it sent, in words a user can act on.
 * A connection that fails before any byte is left to the reachability probe's words: this says only what answered.
 */
export function http1Answer(options: Http1ProbeOptions): Promise<string | undefined> {
  const { host, port } = options;
  const socket = options.tls
    ? openTls({ host, port }, { material: options.tls, serverName: host, alpn: ["http/1.1"] })
    : net.connect({ host, port });
  const said = (received: Buffer) => (received.length > 0 ? describe(received) : undefined);
  return readFirstBytes<string | undefined>(socket, {
    connectEvent: options.tls ? "secureConnect" : "connect",
    timeoutMs: options.timeoutMs,
    connected: () =>
      `GET ${options.path} HTTP/1.1\r\nHost: ${host}:${port}\r\nUser-Agent: example-conformance\r\nConnection: ` +
      `close\r\n\r\n`,
    read(received) {
      if (received.subarray(0, 5).toString("latin1") === "HTTP/") return { answer: undefined };
      if (received.length >= FRAME_HEADER || !"HTTP/".startsWith(received.toString("latin1")))
        return { answer: describe(received) };
      return undefined;
    },
    // Silence is no other protocol: a slow target is the run's to judge (it ends unreachable if it never answers).
    timedOut: said,
    failed: (err, received) => said(received) ?? `no HTTP/1.1 reply (${err.message.split("\n")[0]})`,
    closed: (received) => said(received) ?? "the connection closed without a byte",
  });
}

function describe(bytes: Buffer): string {
  if (bytes.subarray(0, 5).toString("latin1") === "HTTP/")
    return `${JSON.stringify(bytes.toString("latin1").split("\r\n")[0])}`;
  const frame = bytes.length >= FRAME_HEADER ? H2_FRAMES[bytes[3] as number] : undefined;
  if (frame !== undefined && (bytes.readUInt32BE(5) & 0x7fffffff) === 0)
    return `HTTP/2 frames (a ${frame} frame first): an HTTP/2-only port, as a gRPC server's is`;
  if ((bytes[0] === 0x15 || bytes[0] === 0x16) && bytes[1] === 0x03) return "TLS (use https://)";
  return `bytes that are not HTTP: ${[...bytes.subarray(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join(" ")}`;
}
