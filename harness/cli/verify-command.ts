// `verify FILE --key PUB.pem`: whether a signed attestation holds (exit 0) or was changed or signed by another key
// (exit 1), and what it certifies, printed inertly: every word of it came from the file.
import { open } from "node:fs/promises";
import type { Command } from "commander";
import { ed25519PublicKey, isPrivateKeyPem } from "../attest/dsse.js";
import type { Statement } from "../attest/statement.js";
import { verifyAttestation } from "../attest/verify.js";
import { ConformanceError } from "../errors.js";
import { forTerminal as t } from "../_internals/neutralise.js";
import type { CliIo } from "./io.js";

/** An attestation larger than this is no attestation of ours: refused unread. */
const MAX_ATTESTATION_BYTES = 16 << 20;

async function readBounded(path: string, flag: string): Promise<Buffer> {
  let handle;
  try {
    handle = await open(path, "r");
  } catch (err) {
    throw new ConformanceError(
      "usage",
      `${flag}${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? "error"})`,
    );
  }
  try {
    const buf = Buffer.alloc(MAX_ATTESTATION_BYTES + 1);
    let size = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buf, size, buf.length - size, null);
      if (bytesRead === 0) break;
      size += bytesRead;
      if (size > MAX_ATTESTATION_BYTES)
        throw new ConformanceError("usage", `${flag}${path}: more than ${MAX_ATTESTATION_BYTES} bytes, no attestation`);
    }
    return buf.subarray(0, size);
  } catch (err) {
    if (err instanceof ConformanceError) throw err;
    throw new ConformanceError(
      "usage",
      `${flag}${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? "error"})`,
    );
  } finally {
    await handle.close();
  }
}

/** What a verified statement certifies, one inert line each. */
function certifies(statement: Statement): string[] {
  const subject = statement.subject[0];
  const run = statement.predicate.configuration.find((c) => c.name === "run")?.annotations as
    | Record<string, unknown>
    | undefined;
  const suite = statement.predicate.configuration.find((c) => c.name === "example-conformance")?.annotations as
    | Record<string, unknown>
    | undefined;
  const contract = statement.predicate.configuration.find((c) => c.name === "contract");
  const a = (subject?.annotations ?? {}) as Record<string, unknown>;
  const line = (label: string, value: unknown) =>
    value === undefined ? [] : [`${label}: ${t(typeof value === "string" ? value : JSON.stringify(value))}`];
  return [
    ...line("implementation", subject?.name),
    ...line("version", a.version),
    ...line(
      "subject digest",
      subject?.digest
        ? Object.entries(subject.digest)
            .map(([k, v]) => `${k}:${v}`)
            .join(", ")
        : undefined,
    ),
    ...line("bound by", a.boundBy),
    ...line("gRPC", a.grpc),
    ...line("HTTP", a.http),
    ...line("image", a.image),
    ...line("TLS certificate SHA-256", a.tlsCertificateSha256),
    ...line("verdict", run?.verdict),
    ...line("result", statement.predicate.result),
    ...line(
      "claims (declared, not judged)",
      Array.isArray(run?.claims) && run.claims.length > 0 ? (run.claims as unknown[]).join(", ") : undefined,
    ),
    ...line("waivers", Array.isArray(run?.waivers) && run.waivers.length > 0 ? run.waivers : undefined),
    ...line("suite version", suite?.suiteVersion),
    ...line("seed", suite?.seed),
    ...line("contract sha256", contract?.digest?.sha256),
    ...line(
      "checks",
      `${statement.predicate.passedTests.length} passed, ${statement.predicate.warnedTests.length} warned, ` +
        `${statement.predicate.failedTests.length} failed`,
    ),
  ];
}

export function addVerifyCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command("verify")
    .description("verify a signed attestation (check --attestation) against a public key, and print what it certifies")
    .argument("<file>", "the attestation: a DSSE envelope holding an in-toto Statement")
    .requiredOption("--key <pub.pem>", "the ed25519 public key (PEM) it must be signed with")
    .action(async (file: string, opts: { key: string }) => {
      const pem = await readBounded(opts.key, "--key ");
      // The user's mistake, said before anything of the key is used or shown: a verifier takes the public half.
      if (isPrivateKeyPem(pem)) {
        throw new ConformanceError(
          "usage",
          `--key ${opts.key}: a private key; give the public key (make it with: openssl pkey -in ${opts.key} ` +
            `-pubout -out pub.pem)`,
        );
      }
      let key;
      try {
        key = ed25519PublicKey(pem);
      } catch (err) {
        throw new ConformanceError(
          "usage",
          `--key ${opts.key}: not an ed25519 key in PEM ` +
            `(${err instanceof Error ? err.message.split("\n")[0] : String(err)})`,
        );
      }
      const verdict = verifyAttestation(await readBounded(file, ""), key);
      if (!verdict.holds) {
        io.stdout(`does not hold: ${t(file)}: ${t(verdict.why)}\n`);
        setExit(1);
        return;
      }
      const statement = verdict.statement;
      io.stdout(`holds: ${t(file)} is signed by this key and certifies:\n`);
      for (const l of certifies(statement)) io.stdout(`  ${l}\n`);
      setExit(0);
    });
}
