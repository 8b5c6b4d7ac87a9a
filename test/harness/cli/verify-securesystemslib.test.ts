// The third-party verifier of docs/certify.md, Debian's python3-securesystemslib, checks an attestation the harness
// signs: the key id is the one securesystemslib computes from the public key, and the DSSE signature holds for it.
import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../../common/paths.js";
import { signEnvelope } from "../../../harness/attest/dsse.js";
import { IN_TOTO_PAYLOAD_TYPE } from "../../../harness/attest/statement.js";
import { cli } from "../../helpers/cli.js";
import { skipIfMissing } from "../../helpers/toolchain.js";

const run = promisify(execFile);
/**
 * Debian's interpreter: python3-securesystemslib installs under /usr/lib/python3, which a pyenv python3 does not see.
 */
const PYTHON = process.env.EXAMPLE_PYTHON ?? "/usr/bin/python3";
const securesystemslib = {
  name: "docs/certify.md's securesystemslib verifier",
  async missing(): Promise<string | undefined> {
    return run(PYTHON, ["-c", "import securesystemslib, cryptography, nacl"], { timeout: 30_000 }).then(
      () => undefined,
      () =>
        `no securesystemslib, cryptography and nacl for ${PYTHON} (Debian's python3-securesystemslib ` +
        `python3-cryptography python3-nacl)`,
    );
  },
};

const dir = mkdtempSync(join(tmpdir(), "verify-sslib-"));
const script =
  /<!-- securesystemslib-verifier: begin -->\n```python\n([\s\S]*?)```\n<!-- securesystemslib-verifier: end -->/.exec(
    readFileSync(join(PACKAGE_ROOT, "docs", "certify.md"), "utf8"),
  )?.[1];

describe("docs/certify.md's securesystemslib verifier", () => {
  it("is in docs/certify.md", () => {
    expect(script).toBeDefined();
  });

  it("holds for an attestation the harness signed, as verify does; not with a signature changed", async (ctx) => {
    await skipIfMissing(securesystemslib, ctx.skip);
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    const files = {
      script: join(dir, "verify_attestation.py"),
      pub: join(dir, "pub.pem"),
      att: join(dir, "run.intoto.json"),
      bad: join(dir, "bad.json"),
    };
    writeFileSync(files.script, script ?? "");
    writeFileSync(files.pub, publicKey.export({ type: "spki", format: "pem" }));
    const statement = {
      _type: "https://in-toto.io/Statement/v1",
      subject: [{ name: "signed", digest: { sha256: "1".repeat(64) } }],
      predicateType: "https://in-toto.io/attestation/test-result/v0.1",
      predicate: { result: "WARNED", configuration: [], passedTests: [], warnedTests: ["a.check"], failedTests: [] },
    };
    const envelope = signEnvelope(IN_TOTO_PAYLOAD_TYPE, Buffer.from(JSON.stringify(statement)), privateKey);
    writeFileSync(files.att, `${JSON.stringify(envelope, null, 2)}\n`);
    const ours = await cli(["verify", files.att, "--key", files.pub]);
    expect(ours.code, ours.stdout).toBe(0);

    const theirs = await run(PYTHON, [files.script, files.att, files.pub], { timeout: 60_000 }).catch(
      (err: { stderr?: string; code?: number }) => ({ stdout: "", stderr: err.stderr ?? String(err) }),
    );
    expect(theirs.stderr).toBe("");
    expect(theirs.stdout).toBe("holds: WARNED\n");

    // The same envelope with its signature's first byte changed: securesystemslib refuses it.
    const sig = Buffer.from(envelope.signatures[0]?.sig ?? "", "base64");
    sig[0] = (sig[0] ?? 0) ^ 1;
    writeFileSync(
      files.bad,
      `${JSON.stringify({ ...envelope, signatures: [{ ...envelope.signatures[0], sig: sig.toString("base64") }] }, null, 2)}\n`,
    );
    const refused = await run(PYTHON, [files.script, files.bad, files.pub], { timeout: 60_000 }).then(
      () => "held",
      (err: { stderr?: string }) => err.stderr ?? "",
    );
    expect(refused).toContain("UnverifiedSignatureError");
  }, 120_000);
});
