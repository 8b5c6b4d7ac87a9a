// One line for a TLS handshake that failed, in the run's terms, with the flag that fixes it: a certificate the run
// does not trust, a client certificate the server wants or refuses, TLS asked of a plaintext port. OpenSSL's own
// messages run over several lines and name its source files; none of that reaches a user.
import type { TlsOptions } from "./connection.js";

/** Certificate errors by which OpenSSL says the run does not trust what the server presented. */
const UNTRUSTED = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_GET_ISSUER_CERT",
  "CERT_UNTRUSTED",
]);

/** Alerts by which the server says it wanted a client certificate and got none. */
const CERT_WANTED = new Set(["ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED", "ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE"]);

/** Alerts by which the server refused the client certificate it was given. */
const CERT_REFUSED = new Set([
  "ERR_SSL_TLSV1_ALERT_UNKNOWN_CA",
  "ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE",
  "ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN",
  "ERR_SSL_TLSV1_ALERT_ACCESS_DENIED",
]);

/** Answers that are not TLS at all: a plaintext server read the ClientHello as a request. */
const NOT_TLS = new Set(["ERR_SSL_WRONG_VERSION_NUMBER", "ERR_SSL_PACKET_LENGTH_TOO_LONG", "ERR_SSL_HTTP_REQUEST"]);

/** Whether an error is a TLS handshake's (as opposed to the TCP connection's). */
export const isTlsError = (err: NodeJS.ErrnoException): boolean =>
  UNTRUSTED.has(err.code ?? "") ||
  (err.code ?? "").startsWith("ERR_SSL") ||
  (err.code ?? "").startsWith("ERR_TLS") ||
  err.code === "CERT_HAS_EXPIRED";

/**
 * "TLS: ..." for a handshake that failed with `err`, given the run's TLS files; `plaintextFix` is what to do when the
 * port speaks no TLS (leave --tls out, or use http://).
 */
export function describeTlsFailure(
  err: NodeJS.ErrnoException,
  given: TlsOptions | undefined,
  plaintextFix: string,
): string {
  const code = err.code ?? "";
  if (UNTRUSTED.has(code)) {
    return given?.caFile !== undefined
      ? `TLS: its certificate is not signed by the CA in --ca ${given.caFile} (${code})`
      : `TLS: its certificate is not signed by a CA this machine trusts (${code}); give the CA that signed it with ` +
          `--ca`;
  }
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID")
    return `TLS: its certificate does not name this host (${code}); --authority sets the name checked`;
  if (code === "CERT_HAS_EXPIRED") return `TLS: its certificate has expired (${code})`;
  if (NOT_TLS.has(code))
    return `TLS: the answer to the handshake is not TLS (${code}): a plaintext port? then ${plaintextFix}`;
  if (CERT_WANTED.has(code) && given?.certFile === undefined)
    return `TLS: the server wants a client certificate (${code}); give it with --cert and --key`;
  if (CERT_REFUSED.has(code) || CERT_WANTED.has(code))
    return `TLS: the server refused the client certificate in --cert ${given?.certFile ?? ""} (${code})`.replace(
      " --cert  (",
      " (",
    );
  if (code === "ECONNRESET")
    return (
      `TLS: the connection was reset during the handshake (ECONNRESET): does the port speak TLS, or want a client ` +
      `certificate (--cert, --key)?`
    );
  const first = (err.message.split("\n")[0] ?? "")
    .replace(/:\.\.\/deps\/openssl\S*$/, "")
    .replace(/[^\x20-\x7e]/g, "?")
    .slice(0, 200);
  return `TLS: the handshake failed: ${code ? `${code} ` : ""}(${first})`;
}
