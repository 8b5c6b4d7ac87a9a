// A throwaway self-signed certificate for 127.0.0.1 and localhost, made with openssl for the TLS tests.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export function selfSignedCert(): { certFile: string; keyFile: string; cert: Buffer; key: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), "conformance-tls-"));
  const certFile = join(dir, "cert.pem");
  const keyFile = join(dir, "key.pem");
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", keyFile, "-out", certFile], { stdio: "ignore" });
  return { certFile, keyFile, cert: readFileSync(certFile), key: readFileSync(keyFile) };
}
