// The one place a TLS connection is made: the run's TLS settings (the CA, client certificate and key read from --ca,
// --cert and --key; the authority or host the server is named by; the ALPN protocols the caller may speak) turned
// into node:tls's connect options, and a socket opened with them. Every probe, transport and load client of harness/
// connects through here (an https.Agent takes the options, node:http2 the socket: harness/wire/http2.ts), so that a
// setting reaches every connection or none. The server name is sent (SNI) and checked only when it is a DNS name:
// RFC 6066 §3 allows no IP address there.
import net from "node:net";
import tls from "node:tls";
import type { TlsMaterial } from "../targets/connection.js";

export interface TlsSettings {
  /** The run's CA (instead of the system roots), client certificate and key; none for the system roots alone. */
  material?: TlsMaterial | undefined;
  /**
   * What names the server: a host, host:port or [v6]:port (an authority), or a URL's host; ports and brackets dropped.
   */
  serverName?: string | undefined;
  /**
   * ALPN: the protocols the caller may speak, in its order of preference. None: no ALPN at all, as node:https's
   * HTTP/1.1 requests send none (so that Node's HTTP/2-only server answers them with its own 403, which the
   * protocols' probes name).
   */
  alpn?: readonly string[];
  /**
   * False only to read what the server presents whoever signed it (the certificate's fingerprint, whether a port
   * speaks TLS at all): nothing sent on such a socket is trusted to the server.
   */
  verify?: boolean;
}

/** Where a TLS socket connects: a TCP host and port, or a Unix socket's path. */
export type TlsEndpoint = { host: string; port: number } | { path: string };

/** The host of an authority or host: "[::1]:443" gives "::1", "example.com:443" "example.com", "::1" stays. */
function hostOf(name: string): string {
  const bracketed = /^\[([^\]]*)\]/.exec(name);
  if (bracketed) return bracketed[1] as string;
  return name.split(":").length === 2 ? name.replace(/:\d*$/, "") : name;
}

/** node:tls's connect options for the run's settings; servername only for a DNS name, never an IP address. */
export function tlsConnectOptions(settings: TlsSettings): tls.ConnectionOptions {
  const name = settings.serverName === undefined ? "" : hostOf(settings.serverName);
  const { ca, cert, key } = settings.material ?? {};
  return {
    ...(ca !== undefined && { ca }),
    ...(cert !== undefined && { cert }),
    ...(key !== undefined && { key }),
    ...(settings.alpn !== undefined && { ALPNProtocols: [...settings.alpn] }),
    ...(name !== "" && net.isIP(name) === 0 && { servername: name }),
    ...(settings.verify === false && { rejectUnauthorized: false }),
  };
}

/** A TLS socket to the endpoint with the run's settings; its handshake is done when it emits "secureConnect". */
export function openTls(endpoint: TlsEndpoint, settings: TlsSettings): tls.TLSSocket {
  return openTlsWith(endpoint, tlsConnectOptions(settings));
}

/** A TLS socket to the endpoint with options tlsConnectOptions made (a pool keeps them, not the settings). */
export function openTlsWith(endpoint: TlsEndpoint, options: tls.ConnectionOptions): tls.TLSSocket {
  return tls.connect({ ...endpoint, ...options });
}
