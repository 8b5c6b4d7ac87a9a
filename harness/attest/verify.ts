// Whether a signed attestation holds: the file must be exactly the envelope this harness writes (so no byte of it can
// change unnoticed, whitespace and unsigned fields included), signed over DSSE's PAE by the given key, and hold an
// in-toto test-result Statement.
import type { KeyObject } from "node:crypto";
import { keyId, openEnvelope, type Envelope } from "./dsse.js";
import { IN_TOTO_PAYLOAD_TYPE, STATEMENT_TYPE, TEST_RESULT_TYPE, type Statement } from "./statement.js";

export type Verification = { holds: true; statement: Statement } | { holds: false; why: string };

const exactKeys = (value: object, keys: readonly string[]) => {
  const own = Object.keys(value);
  return own.length === keys.length && keys.every((k) => own.includes(k));
};

/** The envelope of the text, when the text is exactly the envelope as written; or why it is not. */
function parseEnvelope(bytes: Buffer): Envelope | string {
  const text = bytes.toString("utf8");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return "not JSON";
  }
  const e = value as Envelope;
  if (typeof e !== "object" || e === null || Array.isArray(e) || !exactKeys(e, ["payloadType", "payload", "signatures"])) return "not a DSSE envelope";
  if (typeof e.payloadType !== "string" || typeof e.payload !== "string" || !Array.isArray(e.signatures)) return "not a DSSE envelope";
  const sigsOk = e.signatures.every((s: unknown) => typeof s === "object" && s !== null && exactKeys(s, ["keyid", "sig"]) && typeof (s as { keyid: unknown }).keyid === "string" && typeof (s as { sig: unknown }).sig === "string");
  if (!sigsOk) return "not a DSSE envelope";
  if (!Buffer.from(`${JSON.stringify(e, null, 2)}\n`).equals(bytes)) return "the file is not the envelope as written (bytes were changed outside the signed payload)";
  return e;
}

function isStatement(s: unknown): s is Statement {
  const st = s as Statement;
  const p = st?.predicate;
  return (
    typeof st === "object" && st !== null && st._type === STATEMENT_TYPE && st.predicateType === TEST_RESULT_TYPE && Array.isArray(st.subject) &&
    typeof p === "object" && p !== null && Array.isArray(p.configuration) && Array.isArray(p.passedTests) && Array.isArray(p.warnedTests) && Array.isArray(p.failedTests)
  );
}

export function verifyAttestation(bytes: Buffer, key: KeyObject): Verification {
  const envelope = parseEnvelope(bytes);
  if (typeof envelope === "string") return { holds: false, why: envelope };
  if (envelope.payloadType !== IN_TOTO_PAYLOAD_TYPE) return { holds: false, why: `payload type is not ${IN_TOTO_PAYLOAD_TYPE}` };
  const id = keyId(key);
  if (!envelope.signatures.every((s) => s.keyid === id)) return { holds: false, why: "a signature names another key" };
  const payload = openEnvelope(envelope, key);
  if (!payload) return { holds: false, why: "no signature verifies with this key: the file was changed, or signed with another key" };
  let statement: unknown;
  try {
    statement = JSON.parse(payload.toString("utf8"));
  } catch {
    return { holds: false, why: "the signed payload is not JSON" };
  }
  if (!isStatement(statement)) return { holds: false, why: "the signed payload is not an in-toto test-result Statement" };
  return { holds: true, statement };
}
