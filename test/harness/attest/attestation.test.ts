// --attestation FILE --sign-key KEY.pem and `verify FILE --key PUB.pem`: a DSSE-signed in-toto Statement that names
// what it certifies, holds when fresh, and fails when any one character of the file is changed.
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ed25519PublicKey, pae } from "../../../harness/attest/dsse.js";
import { verifyAttestation } from "../../../harness/attest/verify.js";
import type { RunReport } from "../../../harness/report.js";
import { startReferenceServer, type ReferenceServer } from "../../../reference-server/start.js";
import { cli } from "../../helpers/cli.js";

/** The parts of an in-toto statement the assertions read (JSON.parse gives no type). */
interface Statement {
  subject: { digest: { sha256: string } }[];
  predicate: { result: string; passedTests: string[]; configuration: { name: string; annotations?: unknown }[] };
}

const dir = mkdtempSync(join(tmpdir(), "attest-"));
const pair = () => {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  return {
    priv: privateKey.export({ type: "pkcs8", format: "pem" }) as string,
    pub: publicKey.export({ type: "spki", format: "pem" }) as string,
  };
};
const mine = pair();
const other = pair();
const paths = {
  priv: join(dir, "key.pem"),
  pub: join(dir, "pub.pem"),
  otherPub: join(dir, "other.pem"),
  att: join(dir, "run.intoto.json"),
  json: join(dir, "run.json"),
  junit: join(dir, "run.xml"),
};
writeFileSync(paths.priv, mine.priv);
writeFileSync(paths.pub, mine.pub);
writeFileSync(paths.otherPub, other.pub);

let reference: ReferenceServer;
let run: Awaited<ReturnType<typeof cli>>;
beforeAll(async () => {
  reference = await startReferenceServer({ grpcPort: 0, httpPort: 0, log: "silent" });
  const config = join(dir, "example-conformance.yaml");
  writeFileSync(
    config,
    `implementation:\n  name: "reference <b>\\e[31m"\n  version: "2.0"\n  url: ` +
      `https://example.com/ref\ntargets:\n  grpc: ${reference.grpcAddress}\nclaims:\n  replicas: single\n`,
  );
  run = await cli([
    "check",
    "--config",
    config,
    "--seed",
    "8",
    "--runs",
    "10",
    "--attestation",
    paths.att,
    "--sign-key",
    paths.priv,
    "--report-json",
    paths.json,
    "--report-junit",
    paths.junit,
  ]);
}, 60_000);
afterAll(async () => {
  await reference?.close();
});

describe("a signed attestation", () => {
  it("is written by check, an in-toto Statement with a test-result predicate in a DSSE envelope", () => {
    expect(run.code, run.stderr).toBe(0);
    const envelope = JSON.parse(readFileSync(paths.att, "utf8")) as {
      payloadType: string;
      payload: string;
      signatures: { keyid: string; sig: string }[];
    };
    expect(envelope.payloadType).toBe("application/vnd.in-toto+json");
    const statement = JSON.parse(Buffer.from(envelope.payload, "base64").toString("utf8")) as Statement;
    expect(statement).toMatchObject({
      _type: "https://in-toto.io/Statement/v1",
      predicateType: "https://in-toto.io/attestation/test-result/v0.1",
    });
    expect(statement.subject[0]).toMatchObject({
      name: "reference <b>\x1b[31m",
      uri: "https://example.com/ref",
      annotations: { version: "2.0", grpc: reference.grpcAddress },
    });
    expect(statement.subject[0]?.digest.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(statement.predicate.result).toBe("PASSED");
    expect(statement.predicate.passedTests).toContain("grpc.defaults.decodes");
    const runAnnotations = statement.predicate.configuration.find((c) => c.name === "run")?.annotations;
    expect(runAnnotations).toMatchObject({ verdict: "conformant", claims: ["replicas: single"] });
    // The signature is over DSSE's PAE, as any DSSE verifier checks it.
    expect(pae("t", Buffer.from("ab")).toString()).toBe("DSSEv1 1 t 2 ab");
  });

  it("every report records the implementation, the claims and the suite", () => {
    const report = JSON.parse(readFileSync(paths.json, "utf8")) as RunReport;
    expect(report).toMatchObject({
      implementation: { name: "reference <b>\x1b[31m", version: "2.0" },
      claims: ["replicas: single"],
      seed: 8,
    });
    const junit = readFileSync(paths.junit, "utf8");
    expect(junit).toContain('name="implementation" value="reference &lt;b&gt;\\x1b[31m"');
    expect(junit).toContain('name="claim" value="replicas: single (declared, not judged)"');
  });

  it("verify holds on it (exit 0) and prints what it certifies, inertly", async () => {
    const v = await cli(["verify", paths.att, "--key", paths.pub]);
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout).toMatch(/^holds: .* is signed by this key and certifies:$/m);
    // The name came from the file: shown inert, its escape sequence as text.
    expect(v.stdout).toMatch(/^ {2}implementation: reference <b>\\x1b\[31m$/m);
    expect(v.stdout).not.toContain("\x1b");
    expect(v.stdout).toMatch(/^ {2}verdict: conformant$/m);
    expect(v.stdout).toMatch(/^ {2}claims \(declared, not judged\): replicas: single$/m);
  });

  it("verify fails (exit 1) with one character changed, wherever it is", async () => {
    const bytes = readFileSync(paths.att);
    const key = ed25519PublicKey(Buffer.from(mine.pub));
    expect(verifyAttestation(bytes, key).holds).toBe(true);
    // Every position of the file, each changed to another character; whitespace also to other whitespace (a tab),
    // which leaves the JSON's meaning as it was.
    for (let i = 0; i < bytes.length; i++) {
      const others = [bytes[i] === 0x41 ? 0x42 : 0x41, ...(bytes[i] === 0x20 || bytes[i] === 0x0a ? [0x09] : [])];
      for (const c of others) {
        const changed = Buffer.from(bytes);
        changed[i] = c;
        const v = verifyAttestation(changed, key);
        if (v.holds)
          throw new Error(
            `a change at byte ${i} (${JSON.stringify(bytes.subarray(Math.max(0, i - 10), i + 10).toString())}) ` +
              `went unnoticed`,
          );
      }
    }
    // And through the command: one character of the payload changed.
    const text = bytes.toString("utf8");
    const at = text.indexOf('"payload": "') + 40;
    const tampered = join(dir, "tampered.json");
    writeFileSync(tampered, text.slice(0, at) + (text[at] === "A" ? "B" : "A") + text.slice(at + 1));
    const v = await cli(["verify", tampered, "--key", paths.pub]);
    expect(v.code).toBe(1);
    expect(v.stdout).toMatch(/^does not hold: .*tampered\.json: /);
    expect(v.stdout).not.toMatch(/certifies/);
  });

  it("verify fails with another key (exit 1), and a key that is no key is exit 2", async () => {
    const v = await cli(["verify", paths.att, "--key", paths.otherPub]);
    expect(v.code).toBe(1);
    const bad = join(dir, "bad.pem");
    writeFileSync(bad, "not a key");
    const b = await cli(["verify", paths.att, "--key", bad]);
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(/^example-conformance: --key .*bad\.pem: not an ed25519 key in PEM/);
  });

  it("check refuses --attestation without --sign-key, and a key that is not ed25519, before the run", async () => {
    const alone = await cli(["check", "--attestation", join(dir, "x.json")]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toBe(
      "example-conformance: --attestation and --sign-key go together: the attestation is signed with the key\n",
    );
    const rsa = join(dir, "rsa.pem");
    writeFileSync(
      rsa,
      generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({ type: "pkcs8", format: "pem" }) as string,
    );
    const wrong = await cli([
      "check",
      "--grpc",
      "127.0.0.1:1",
      "--attestation",
      join(dir, "y.json"),
      "--sign-key",
      rsa,
    ]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(
      /--sign-key .*rsa\.pem: not an ed25519 private key in PEM \(an rsa key, where ed25519 is needed\)/,
    );
  });
});

describe("a run over TLS", () => {
  it("records the SHA-256 fingerprint of the certificate the target presented", async () => {
    const { X509Certificate } = await import("node:crypto");
    const http2 = await import("node:http2");
    const { selfSignedCert } = await import("../../helpers/tls.js");
    const { listenTracked } = await import("../../../fixtures/_internals/listen-tracked.js");
    const { encodeMessage } = await import("../../../contract/message.js");
    const tls = selfSignedCert();
    const server = http2.createSecureServer({ cert: tls.cert, key: tls.key });
    server.on("stream", (stream) => {
      stream.on("error", () => undefined);
      stream.resume();
      stream.on("end", () => {
        stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
        stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
        const body = Buffer.from(encodeMessage("hello"));
        const prefix = Buffer.alloc(5);
        prefix.writeUInt32BE(body.length, 1);
        stream.end(Buffer.concat([prefix, body]));
      });
    });
    const listening = await listenTracked(server);
    try {
      const json = join(dir, "tls.json");
      const r = await cli([
        "check",
        "--grpc",
        listening.address,
        "--tls",
        "--ca",
        tls.certFile,
        "--only",
        "grpc.defaults.decodes",
        "--runs",
        "3",
        "--seed",
        "1",
        "--report-json",
        json,
      ]);
      expect(r.code, r.stderr).toBe(0);
      const report = JSON.parse(readFileSync(json, "utf8")) as RunReport;
      expect(report.target.tlsFingerprint).toBe(new X509Certificate(tls.cert).fingerprint256);
    } finally {
      await listening.close();
    }
  }, 60_000);
});
