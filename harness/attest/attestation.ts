// --attestation FILE --sign-key KEY.pem: the run's in-toto Statement, signed in a DSSE envelope with the user's
// ed25519 key; and the other way, what a signed envelope certifies once it verifies.
import { readFileSync } from "node:fs";
import type { KeyObject } from "node:crypto";
import { ConformanceError } from "../errors.js";
import type { Reporter } from "../report.js";
import type { ReportSink } from "../reporters/index.js";
import { ed25519PrivateKey, signEnvelope, type Envelope } from "./dsse.js";
import { IN_TOTO_PAYLOAD_TYPE, toStatement } from "./statement.js";

/** Reads the signing key before anything runs: an unreadable or non-ed25519 key is a usage error naming the flag. */
export function loadSigningKey(path: string): KeyObject {
  let pem: Buffer;
  try {
    pem = readFileSync(path);
  } catch (err) {
    throw new ConformanceError(
      "usage",
      `--sign-key ${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? "error"})`,
    );
  }
  try {
    return ed25519PrivateKey(pem);
  } catch (err) {
    throw new ConformanceError(
      "usage",
      `--sign-key ${path}: not an ed25519 private key in PEM ` +
        `(${err instanceof Error ? err.message.split("\n")[0] : String(err)}); make one with: openssl genpkey ` +
        `-algorithm ed25519 -out key.pem`,
    );
  }
}

/** The signed envelope of a run, as the file holds it. */
export function attestationText(report: Parameters<typeof toStatement>[0], key: KeyObject): string {
  const envelope: Envelope = signEnvelope(IN_TOTO_PAYLOAD_TYPE, Buffer.from(JSON.stringify(toStatement(report))), key);
  return `${JSON.stringify(envelope, null, 2)}\n`;
}

/** A reporter that writes the signed attestation when the run ends. */
export function createAttestationReporter(file: ReportSink, key: KeyObject): Reporter {
  return {
    async onRunEnd(report) {
      await file.write(attestationText(report, key));
    },
  };
}
