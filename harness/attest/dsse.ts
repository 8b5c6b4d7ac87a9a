// DSSE (Dead Simple Signing Envelope) v1 with ed25519 keys from node:crypto: sign a payload with its type, and verify
// an envelope against a public key. Signatures are over PAE(type, payload), never over the JSON.
import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from "node:crypto";

export interface Envelope {
  payloadType: string;
  /** base64 of the payload's bytes. */
  payload: string;
  signatures: { keyid?: string; sig: string }[];
}

/**
 * DSSE's pre-authentication encoding: "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, lengths in ASCII decimal
 * bytes.
 */
export function pae(payloadType: string, payload: Buffer): Buffer {
  const type = Buffer.from(payloadType, "utf8");
  return Buffer.concat([Buffer.from(`DSSEv1 ${type.length} `), type, Buffer.from(` ${payload.length} `), payload]);
}

/** A private key from PEM; anything but ed25519 is refused (with the reason, for a one-line error). */
export function ed25519PrivateKey(pem: Buffer): KeyObject {
  const key = createPrivateKey(pem);
  if (key.asymmetricKeyType !== "ed25519")
    throw new Error(`an ${key.asymmetricKeyType ?? "unknown"} key, where ed25519 is needed`);
  return key;
}

/**
 * Whether the PEM holds a private key (of any kind, encrypted or not). Node would take a private key's public half
 * as a public key; `verify --key` refuses it instead: a private key handed to a verifier is a secret out of place.
 */
export function isPrivateKeyPem(pem: Buffer): boolean {
  if (/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(pem.toString("latin1"))) return true;
  try {
    createPrivateKey(pem);
    return true;
  } catch {
    return false;
  }
}

/** A public key from PEM; a private key, or anything but ed25519, is refused. */
export function ed25519PublicKey(pem: Buffer): KeyObject {
  if (isPrivateKeyPem(pem)) throw new Error("a private key, where the public key is needed");
  const key = createPublicKey(pem);
  if (key.asymmetricKeyType !== "ed25519")
    throw new Error(`an ${key.asymmetricKeyType ?? "unknown"} key, where ed25519 is needed`);
  return key;
}

/**
 * The key's ID as securesystemslib (in-toto, TUF) computes it for an ed25519 key: the SHA-256, hex, of the canonical
 * JSON of its public key dict, {"keytype":"ed25519","keyval":{"public":HEX},"scheme":"ed25519"} (keys sorted, no
 * spaces; HEX the 32 raw bytes). DSSE makes the keyid an unsigned hint; following the convention lets an in-toto
 * verifier find the key by it.
 */
export function keyId(key: KeyObject): string {
  const jwk = (key.type === "private" ? createPublicKey(key) : key).export({ format: "jwk" });
  const publicHex = Buffer.from(jwk.x ?? "", "base64url").toString("hex");
  const canonical = `{"keytype":"ed25519","keyval":{"public":"${publicHex}"},"scheme":"ed25519"}`;
  return createHash("sha256").update(canonical).digest("hex");
}

export function signEnvelope(payloadType: string, payload: Buffer, key: KeyObject): Envelope {
  const sig = sign(null, pae(payloadType, payload), key);
  return {
    payloadType,
    payload: payload.toString("base64"),
    signatures: [{ keyid: keyId(key), sig: sig.toString("base64") }],
  };
}

/**
 * The payload's bytes when the envelope has signatures and every one verifies with the key; undefined otherwise.
 * Every, not some: a second entry nobody checks would be bytes beside the signed statement that pass unseen.
 */
export function openEnvelope(envelope: Envelope, key: KeyObject): Buffer | undefined {
  const payload = Buffer.from(envelope.payload, "base64");
  // base64 that does not round-trip was changed (or padded with junk): what was signed is not what is shown.
  if (payload.toString("base64") !== envelope.payload) return undefined;
  const message = pae(envelope.payloadType, payload);
  const holds =
    envelope.signatures.length > 0 &&
    envelope.signatures.every((s) => {
      const sig = Buffer.from(s.sig, "base64");
      return sig.toString("base64") === s.sig && verify(null, message, key, sig);
    });
  return holds ? payload : undefined;
}
