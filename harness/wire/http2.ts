// The one place an HTTP/2 client session is opened (node:http2): h2c, or TLS through harness/wire/tls.ts with the
// run's CA, client certificate and key, the authority as the server name and ALPN h2; over TCP or a Unix socket.
// The hand-built gRPC requests (harness/protocols/grpc/raw-h2.ts) open one session per request; load's replies at
// rest keep one, replaced for the next call once the server sent GOAWAY or the connection closed (a deployment's
// limit: nginx's 1,000 requests a connection, grpc-go's maximum connection age), the replacements counted.
// grpc-js opens its own sessions (harness/protocols/grpc/grpc-js-client.ts), and load's fast client frames its own
// (harness/wire/raw-h2-client.ts): see docs/architecture.md.
import http2 from "node:http2";
import net from "node:net";
import type { ParsedAddress } from "../targets/address.js";
import { defaultAuthority, type TlsMaterial } from "../targets/connection.js";
import { openTls } from "./tls.js";

export interface Http2Target {
  address: ParsedAddress;
  /** TLS with the run's material ({} for the system roots alone); absent for h2c. */
  tls?: TlsMaterial | undefined;
  /** The :authority a request names by default and the TLS server name; the address's host:port when absent. */
  authority?: string | undefined;
  /** node:http2's own session options (peerMaxConcurrentStreams, say). */
  session?: http2.ClientSessionOptions;
}

/** A session to the target of its own: the caller's to close. Its errors are the caller's to listen for. */
export function openHttp2Session(target: Http2Target): http2.ClientHttp2Session {
  const { address, tls } = target;
  const endpoint = address.kind === "unix" ? { path: address.path } : { host: address.host, port: address.port };
  // The URL gives node:http2 the scheme and the default :authority; the socket is made here.
  const url = `${tls ? "https" : "http"}://${defaultAuthority(address)}`;
  const serverName = target.authority ?? defaultAuthority(address);
  const connection = tls
    ? () => openTls(endpoint, { material: tls, serverName, alpn: ["h2"] })
    : address.kind === "unix"
      ? () => net.connect(address.path)
      : undefined;
  return http2.connect(url, { ...target.session, ...(connection && { createConnection: connection }) });
}

/**
 * What a TLS server picks by ALPN when offered h2 and http/1.1, on a connection of its own closed at once: "h2",
 * "http/1.1", or "" when it picked none. A failed connection or handshake rejects with its error (the caller's to
 * name); no answer within timeoutMs rejects too.
 */
export function tlsAlpnChoice(target: Http2Target & { tls: TlsMaterial }, timeoutMs: number): Promise<string> {
  const { address } = target;
  const endpoint = address.kind === "unix" ? { path: address.path } : { host: address.host, port: address.port };
  const serverName = target.authority ?? defaultAuthority(address);
  return new Promise((resolve, reject) => {
    const socket = openTls(endpoint, { material: target.tls, serverName, alpn: ["h2", "http/1.1"] });
    const timer = setTimeout(() => socket.destroy(new Error(`no TLS handshake within ${timeoutMs} ms`)), timeoutMs);
    socket.once("secureConnect", () => {
      clearTimeout(timer);
      resolve(socket.alpnProtocol || "");
      socket.destroy();
    });
    socket.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

/** A session for calls made one after another: replaced once it cannot take another (see keptHttp2Session). */
export interface KeptHttp2Session {
  /** A session that takes new calls: the one before, or a new one when that one got GOAWAY or closed. */
  readonly session: http2.ClientHttp2Session;
  /** Sessions opened to replace one the server ended or that closed: no errors, a deployment's limits. */
  readonly reconnections: number;
  /** Closes every session opened, the replaced ones that are still finishing their calls included. */
  close(): void;
}

const ignore = (): void => undefined;
/** How long a closed session's socket may take to finish writing before it is destroyed. */
const CLOSE_GRACE_MS = 1000;

/**
 * One session kept for calls made one after another. A session that received GOAWAY (node:http2 then closes it once
 * its open streams end) or closed is not given again: the next call gets a new one, counted in `reconnections`.
 * node:http2 leaves the socket of a session it closed after a GOAWAY half-open while the server keeps its side open:
 * destroyed here a moment later, and at close().
 */
export function keptHttp2Session(target: Http2Target): KeptHttp2Session {
  const open = new Set<http2.ClientHttp2Session>();
  const sockets = new Set<net.Socket>();
  const ended = new WeakSet<http2.ClientHttp2Session>();
  const connect = (): http2.ClientHttp2Session => {
    const s = openHttp2Session(target);
    open.add(s);
    // A failed connection fails the calls on it; the session's own error event has nothing to add.
    s.on("error", ignore);
    s.once("goaway", () => ended.add(s));
    s.once("connect", (_session: http2.ClientHttp2Session, socket: net.Socket) => {
      sockets.add(socket);
      socket.once("close", () => sockets.delete(socket));
      s.once("close", () => setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref());
    });
    s.once("close", () => {
      ended.add(s);
      open.delete(s);
    });
    return s;
  };
  let current = connect();
  let reconnections = 0;
  return {
    get session() {
      if (ended.has(current) || current.closed || current.destroyed) {
        current = connect();
        reconnections++;
      }
      return current;
    },
    get reconnections() {
      return reconnections;
    },
    close() {
      for (const s of open) s.destroy();
      for (const socket of sockets) socket.destroy();
      open.clear();
      sockets.clear();
    },
  };
}
