// Whether a signed attestation holds: the file must be exactly the envelope this harness writes (so no byte of it can
// change unnoticed, whitespace, unsigned fields and extra signature entries included), signed over DSSE's PAE by the
// given key, and hold an in-toto test-result Statement; when it does not, the reason names what differs.
import type { KeyObject } from "node:crypto";
import { cut } from "../_internals/neutralise.js";
import { keyId, openEnvelope, type Envelope } from "./dsse.js";
import { IN_TOTO_PAYLOAD_TYPE, STATEMENT_TYPE, TEST_RESULT_TYPE, type Statement } from "./statement.js";

export type Verification = { holds: true; statement: Statement } | { holds: false; why: string };

/** A name or value read from the file, bounded and quoted for a one-line reason (the command neutralises it). */
const named = (text: string) => JSON.stringify(cut(text, 64));

/** What differs between an object's fields and the fields written, or undefined when they are the same. */
function fieldsDiffer(value: object, written: readonly string[], what: string): string | undefined {
  const own = Object.keys(value);
  const extra = own.find((k) => !written.includes(k));
  if (extra !== undefined) return `${what} has a field that was not written: ${named(extra)}`;
  const lacking = written.find((k) => !own.includes(k));
  return lacking === undefined ? undefined : `${what} lacks its ${named(lacking)} field`;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The envelope of the text, when the text is exactly the envelope as written: one signature, by this key's id, no
 * field that was not written, the in-toto payload type, and the very bytes the harness writes; or what differs.
 */
function parseEnvelope(bytes: Buffer, id: string): Envelope | string {
  const text = bytes.toString("utf8");
  let e: unknown;
  try {
    e = JSON.parse(text);
  } catch {
    return "not JSON";
  }
  if (!isObject(e)) return "not a DSSE envelope (not a JSON object)";
  const differs = fieldsDiffer(e, ["payloadType", "payload", "signatures"], "the envelope");
  if (differs !== undefined) return differs;
  if (typeof e.payloadType !== "string") return 'the envelope\'s "payloadType" is not a string';
  if (e.payloadType !== IN_TOTO_PAYLOAD_TYPE)
    return `payload type ${named(e.payloadType)}, where ${IN_TOTO_PAYLOAD_TYPE} was written`;
  if (typeof e.payload !== "string") return 'the envelope\'s "payload" is not a string';
  if (!Array.isArray(e.signatures)) return 'the envelope\'s "signatures" is not a list';
  if (e.signatures.length !== 1) return `${e.signatures.length} signatures, where exactly one was written`;
  const s: unknown = e.signatures[0];
  if (!isObject(s)) return "the signature is not a JSON object";
  const sigDiffers = fieldsDiffer(s, ["keyid", "sig"], "the signature");
  if (sigDiffers !== undefined) return sigDiffers;
  if (typeof s.keyid !== "string" || typeof s.sig !== "string")
    return 'the signature\'s "keyid" or "sig" is not a string';
  if (s.keyid !== id) return `the signature names key id ${named(s.keyid)}, not this key's ${id}`;
  if (!Buffer.from(`${JSON.stringify(e, null, 2)}\n`).equals(bytes))
    return "the file is not the envelope as written (bytes were changed outside the signed payload)";
  return e as unknown as Envelope;
}

function isStatement(s: unknown): s is Statement {
  const st = s as Statement;
  const p = st?.predicate;
  return (
    typeof st === "object" &&
    st !== null &&
    st._type === STATEMENT_TYPE &&
    st.predicateType === TEST_RESULT_TYPE &&
    Array.isArray(st.subject) &&
    typeof p === "object" &&
    p !== null &&
    Array.isArray(p.configuration) &&
    Array.isArray(p.passedTests) &&
    Array.isArray(p.warnedTests) &&
    Array.isArray(p.failedTests)
  );
}

export function verifyAttestation(bytes: Buffer, key: KeyObject): Verification {
  const envelope = parseEnvelope(bytes, keyId(key));
  if (typeof envelope === "string") return { holds: false, why: envelope };
  const payload = openEnvelope(envelope, key);
  if (!payload)
    return {
      holds: false,
      why: "no signature verifies with this key: the file was changed, or signed with another key",
    };
  let statement: unknown;
  try {
    statement = JSON.parse(payload.toString("utf8"));
  } catch {
    return { holds: false, why: "the signed payload is not JSON" };
  }
  if (!isStatement(statement))
    return { holds: false, why: "the signed payload is not an in-toto test-result Statement" };
  return { holds: true, statement };
}
