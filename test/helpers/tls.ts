// A throwaway self-signed certificate for 127.0.0.1 and localhost, made with openssl for the TLS tests.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export function selfSignedCert(): { certFile: string; keyFile: string; cert: Buffer; key: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), "conformance-tls-"));
  const certFile = join(dir, "cert.pem");
  const keyFile = join(dir, "key.pem");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=DNS:localhost,IP:127.0.0.1",
      "-keyout",
      keyFile,
      "-out",
      certFile,
    ],
    { stdio: "ignore" },
  );
  return { certFile, keyFile, cert: readFileSync(certFile), key: readFileSync(keyFile) };
}

/**
 * A TLS terminator on 127.0.0.1 port 0 in front of a plaintext TCP port (as a deployment's proxy would be): each
 * TLS connection is piped to a fresh connection to `port`.
 */
export async function tlsFront(
  port: number,
  cert: { cert: Buffer; key: Buffer },
  extra: import("node:tls").TlsOptions = {},
): Promise<{ port: number; close(): Promise<void> }> {
  const { createServer } = await import("node:tls");
  const { connect } = await import("node:net");
  const sockets = new Set<import("node:net").Socket>();
  // HTTP/1.1 only unless `extra` says otherwise (ALPNProtocols, requestCert for mutual TLS).
  const server = createServer({ cert: cert.cert, key: cert.key, ALPNProtocols: ["http/1.1"], ...extra }, (client) => {
    const upstream = connect(port, "127.0.0.1");
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as import("node:net").AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
