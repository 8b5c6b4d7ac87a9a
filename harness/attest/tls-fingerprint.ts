// The SHA-256 fingerprint of the certificate a TLS target presents, for the report: one bounded handshake of its own,
// reading the certificate only (the run's clients verify it as the flags ask).
import { readFileSync } from "node:fs";
import type tls from "node:tls";
import { openTls } from "../wire/tls.js";

export interface TlsEndpoint {
  host: string;
  port: number;
  /** SNI, as --authority gives it. */
  servername?: string;
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  alpn: string[];
}

/** "AB:CD:..." as node:tls gives it, or undefined when no certificate was presented within the bound. */
export function tlsFingerprint(endpoint: TlsEndpoint, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    let socket: tls.TLSSocket;
    const done = (value: string | undefined) => {
      clearTimeout(timer);
      socket?.destroy();
      resolve(value);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    try {
      const material = {
        ...(endpoint.caFile !== undefined && { ca: readFileSync(endpoint.caFile) }),
        ...(endpoint.certFile !== undefined && { cert: readFileSync(endpoint.certFile) }),
        ...(endpoint.keyFile !== undefined && { key: readFileSync(endpoint.keyFile) }),
      };
      // Only the certificate is read here; whether it is trusted is the run's clients' to decide.
      socket = openTls(
        { host: endpoint.host, port: endpoint.port },
        { material, serverName: endpoint.servername, alpn: endpoint.alpn, verify: false },
      );
    } catch {
      done(undefined);
      return;
    }
    socket.once("secureConnect", () => {
      const fp = socket.getPeerCertificate().fingerprint256;
      done(typeof fp === "string" && fp !== "" ? fp : undefined);
    });
    socket.once("error", () => done(undefined));
  });
}
