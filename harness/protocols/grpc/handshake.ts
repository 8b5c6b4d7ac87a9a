// Whether a target speaks HTTP/2 at all: its first frame must be SETTINGS (RFC 9113 §3.4), whatever else it does.
import net from "node:net";
import type tls from "node:tls";
import type { ParsedAddress } from "../../targets/address.js";
import type { TlsMaterial } from "../../targets/connection.js";
import { readFirstBytes } from "../../targets/first-bytes.js";
import { openTls } from "../../wire/tls.js";

/** The client connection preface and an empty SETTINGS frame: what every HTTP/2 client sends first. */
const PREFACE = Buffer.concat([
  Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1"),
  Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]),
]);
const FRAME_HEADER = 9;
const SETTINGS = 0x04;
const ACK = 0x01;

export interface HandshakeOptions {
  address: ParsedAddress;
  /** TLS material when the run asked for TLS; the handshake then needs ALPN h2. */
  tls?: TlsMaterial;
  servername?: string;
  timeoutMs: number;
  /** With tls: the line for a TLS error ("TLS: ..."), in the run's terms. */
  describeTls?: (err: NodeJS.ErrnoException) => string;
  /**
   * With tls: the reason when the server closed right after the TLS handshake, before any byte. TLS 1.3 refuses a
   * client certificate after the handshake, often with no alert the client reads.
   */
  closedAfterTls?: string;
}

/**
 * Undefined when the target answers the HTTP/2 preface with a SETTINGS frame within the bound; else why not, in
 * words a user can act on. A server that never does cannot serve gRPC, and grpc-js would hold such a connection
 * open with no time limit of its own.
 */
export async function probeHandshake(options: HandshakeOptions): Promise<string | undefined> {
  const reason = await firstFrame(options);
  // A TLS server meets a plaintext preface by closing, often without a word: ask it in TLS to name the cause.
  if (reason !== undefined && !options.tls && !reason.includes("(try --tls)") && (await speaksTls(options)))
    return `${reason}; it speaks TLS (try --tls)`;
  return reason;
}

/** Whether a TLS handshake succeeds, whoever signed the certificate: only to suggest --tls, never to trust it. */
function speaksTls(options: HandshakeOptions): Promise<boolean> {
  const { address } = options;
  return new Promise((resolve) => {
    const endpoint = address.kind === "unix" ? { path: address.path } : { host: address.host, port: address.port };
    const socket = openTls(endpoint, { alpn: ["h2"], verify: false });
    const done = (yes: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(yes);
    };
    const timer = setTimeout(() => done(false), options.timeoutMs);
    socket.once("secureConnect", () => done(true));
    socket.once("error", () => done(false));
    socket.once("close", () => done(false));
  });
}

function firstFrame(options: HandshakeOptions): Promise<string | undefined> {
  const { address, timeoutMs } = options;
  const endpoint = address.kind === "unix" ? { path: address.path } : { host: address.host, port: address.port };
  const socket = options.tls
    ? openTls(endpoint, { material: options.tls, serverName: options.servername, alpn: ["h2"] })
    : net.connect(endpoint);
  return readFirstBytes<string | undefined>(socket, {
    connectEvent: options.tls ? "secureConnect" : "connect",
    timeoutMs,
    connected() {
      const alpn = options.tls ? (socket as tls.TLSSocket).alpnProtocol : "h2";
      return alpn === "h2"
        ? PREFACE
        : { answer: `TLS did not agree on HTTP/2 by ALPN (got ${JSON.stringify(alpn || "none")})` };
    },
    read(received) {
      if (received.length < FRAME_HEADER) return undefined;
      const type = received[3];
      const flags = received[4] ?? 0;
      const stream = received.readUInt32BE(5) & 0x7fffffff;
      return {
        answer:
          type === SETTINGS && (flags & ACK) === 0 && stream === 0
            ? undefined
            : `its first frame is not SETTINGS${describe(received, options)}`,
      };
    },
    timedOut: (received) => `no HTTP/2 SETTINGS frame within ${timeoutMs} ms${describe(received, options)}`,
    failed(err) {
      const described =
        options.tls && options.describeTls && (err.code ?? "").startsWith("ERR_SSL")
          ? options.describeTls(err)
          : undefined;
      return described ?? `the HTTP/2 handshake failed: ${err.message.split("\n")[0]}`;
    },
    closed: (received, up) =>
      options.tls && up && received.length === 0 && options.closedAfterTls !== undefined
        ? options.closedAfterTls
        : `the connection closed before the HTTP/2 handshake${describe(received, options)}`,
  });
}

/** What the first bytes say the target is, when it is not HTTP/2. */
function describe(bytes: Buffer, options: HandshakeOptions): string {
  if (bytes.length === 0) return "; it sent nothing";
  // A TLS record (alert 0x15 or handshake 0x16, version 3.x) where plaintext HTTP/2 was expected.
  if (!options.tls && (bytes[0] === 0x15 || bytes[0] === 0x16) && bytes[1] === 0x03)
    return "; it answered with TLS (try --tls)";
  const text = bytes.toString("latin1");
  if (text.startsWith("HTTP/")) return `; it answered in HTTP/1.x (${JSON.stringify(text.split("\r\n")[0])})`;
  return `; its first bytes: ${[...bytes.subarray(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join(" ")}`;
}
