// How to reach a gRPC target: the address, TLS material, authority, credentials metadata and the per-call bound.
import { readFileSync } from "node:fs";
import { ConformanceError } from "../errors.js";
import type { ParsedAddress } from "./address.js";

export interface TlsOptions {
  /** CA bundle (PEM) to trust instead of the system roots. */
  caFile?: string;
  /** Client certificate and key (PEM), for mutual TLS. */
  certFile?: string;
  keyFile?: string;
}

export interface ConnectionOptions {
  address: ParsedAddress;
  /** The address as the user wrote it. */
  display: string;
  /** TLS on (with system roots unless caFile is set); absent for plaintext. */
  tls?: TlsOptions;
  /** :authority / TLS server name override. */
  authority?: string;
  /** Metadata sent on every call (credentials the target needs). */
  metadata: Readonly<Record<string, string>>;
  /** Bound on one call, in milliseconds. */
  timeoutMs: number;
}

export interface TlsMaterial {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

function readPem(file: string, flag: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new ConformanceError(
      "usage",
      `${flag} ${file}: ${(err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : String(err)}`,
    );
  }
}

export function loadTls(tls: TlsOptions): TlsMaterial {
  if ((tls.certFile === undefined) !== (tls.keyFile === undefined)) {
    throw new ConformanceError("usage", "--cert and --key go together (mutual TLS needs both)");
  }
  return {
    ...(tls.caFile !== undefined && { ca: readPem(tls.caFile, "--ca") }),
    ...(tls.certFile !== undefined && { cert: readPem(tls.certFile, "--cert") }),
    ...(tls.keyFile !== undefined && { key: readPem(tls.keyFile, "--key") }),
  };
}

/** The :authority a client sends by default: host:port, or localhost for a unix socket. */
export function defaultAuthority(address: ParsedAddress): string {
  if (address.kind === "unix") return "localhost";
  return address.host.includes(":") ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
}
