// `verify` holds only for the envelope exactly as written: a second signature entry, a field that was not written or
// another payload type is refused (exit 1) naming what differs, each signed with the right key so that only that
// one difference is left to notice; a private key given as --key is the user's mistake (exit 2, one line).
import { createPublicKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { keyId, pae, signEnvelope, type Envelope } from "../../../harness/attest/dsse.js";
import { IN_TOTO_PAYLOAD_TYPE } from "../../../harness/attest/statement.js";
import { cli } from "../../helpers/cli.js";

const dir = mkdtempSync(join(tmpdir(), "verify-strict-"));
const mine = generateKeyPairSync("ed25519");
const other = generateKeyPairSync("ed25519");
const pubFile = join(dir, "pub.pem");
writeFileSync(pubFile, mine.publicKey.export({ type: "spki", format: "pem" }));

/** The smallest test-result Statement verify takes: what the envelopes below carry. */
const statement = Buffer.from(
  JSON.stringify({
    _type: "https://in-toto.io/Statement/v1",
    subject: [{ name: "crafted", digest: { sha256: "0".repeat(64) } }],
    predicateType: "https://in-toto.io/attestation/test-result/v0.1",
    predicate: { result: "PASSED", configuration: [], passedTests: ["a.check"], warnedTests: [], failedTests: [] },
  }),
);

/** The file as the harness writes an envelope. */
const written = (envelope: object) => `${JSON.stringify(envelope, null, 2)}\n`;

async function verifyFile(name: string, envelope: object) {
  const file = join(dir, name);
  writeFileSync(file, written(envelope));
  return cli(["verify", file, "--key", pubFile]);
}

/** A signature over the envelope's own PAE, by the given key, base64. */
const sigOf = (payloadType: string, key: KeyObject) => sign(null, pae(payloadType, statement), key).toString("base64");

describe("verify holds only for the envelope exactly as written", () => {
  const good: Envelope = signEnvelope(IN_TOTO_PAYLOAD_TYPE, statement, mine.privateKey);

  it("holds for the crafted statement as the harness signs it (the cases below differ from it in one thing)", async () => {
    const v = await verifyFile("good.json", good);
    expect(v.code, v.stdout + v.stderr).toBe(0);
    expect(v.stdout).toMatch(/^holds: /);
  });

  it(
    "refuses a second signature entry naming the signer's key id, holding another key's signature or 64 random " +
      "bytes",
    async () => {
      const [first] = good.signatures;
      for (const [name, sig] of [
        ["other-key", sigOf(IN_TOTO_PAYLOAD_TYPE, other.privateKey)],
        ["random", randomBytes(64).toString("base64")],
      ] as const) {
        const v = await verifyFile(`second-${name}.json`, {
          ...good,
          signatures: [first, { keyid: first?.keyid, sig }],
        });
        expect(v.code, `${name}: ${v.stdout}`).toBe(1);
        expect(v.stdout).toMatch(/^does not hold: .*: 2 signatures, where exactly one was written\n$/);
      }
    },
  );

  it("refuses a field that was not written, in the signature or the envelope, naming it inertly", async () => {
    const [first] = good.signatures;
    const inSig = await verifyFile("sig-field.json", { ...good, signatures: [{ ...first, note: "trust me" }] });
    expect(inSig.code).toBe(1);
    expect(inSig.stdout).toMatch(/^does not hold: .*: the signature has a field that was not written: "note"\n$/);
    // A field name from the file, with an escape sequence and a bidi override, shown as text.
    const outer = await verifyFile("envelope-field.json", { ...good, "x\u001b[31m\u202e": 1 });
    expect(outer.code).toBe(1);
    expect(outer.stdout).toContain('the envelope has a field that was not written: "x\\u001b[31m\\u202e"');
    expect(outer.stdout).not.toMatch(/[\u001b\u202e]/);
  });

  it("refuses another payload type, signed over that type, naming the type found", async () => {
    const type = "application/json";
    const v = await verifyFile("type.json", {
      ...good,
      payloadType: type,
      signatures: [{ keyid: good.signatures[0]?.keyid, sig: sigOf(type, mine.privateKey) }],
    });
    expect(v.code).toBe(1);
    expect(v.stdout).toMatch(
      /^does not hold: .*: payload type "application\/json", where application\/vnd\.in-toto\+json was written\n$/,
    );
  });

  it("refuses a signature entry naming another key id, naming both", async () => {
    const v = await verifyFile("keyid.json", { ...good, signatures: [{ keyid: "abc", sig: good.signatures[0]?.sig }] });
    expect(v.code).toBe(1);
    expect(v.stdout).toMatch(/: the signature names key id "abc", not this key's [0-9a-f]{64}\n$/);
  });
});

describe("the key id", () => {
  it(
    "is securesystemslib's for an ed25519 key (RFC 8032's first test key; the id from Debian's securesystemslib " +
      "0.26)",
    () => {
      const x = Buffer.from("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "hex").toString(
        "base64url",
      );
      const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x }, format: "jwk" });
      // hashlib.sha256(encode_canonical({"keytype": "ed25519", "scheme": "ed25519", "keyval": {"public": HEX}}).encode())
      expect(keyId(key)).toBe("74c181c7ad8a0855d4b55e44d2ba87aabdddb196832571f15f92fece332e4916");
    },
  );
});

describe("verify --key", () => {
  it("refuses a private key, plain or encrypted, with one line saying to give the public key (exit 2)", async () => {
    const att = join(dir, "att.json");
    writeFileSync(att, written(signEnvelope(IN_TOTO_PAYLOAD_TYPE, statement, mine.privateKey)));
    const keys = {
      "key.pem": mine.privateKey.export({ type: "pkcs8", format: "pem" }),
      "encrypted.pem": mine.privateKey.export({
        type: "pkcs8",
        format: "pem",
        cipher: "aes-256-cbc",
        passphrase: "pw",
      }),
    };
    for (const [name, pem] of Object.entries(keys)) {
      const file = join(dir, name);
      writeFileSync(file, pem);
      const v = await cli(["verify", att, "--key", file]);
      expect(v.code, name).toBe(2);
      expect(v.stdout).toBe("");
      expect(v.stderr).toBe(
        `example-conformance: --key ${file}: a private key; give the public key (make it with: openssl pkey -in ` +
          `${file} -pubout -out pub.pem)\n`,
      );
    }
  });
});
