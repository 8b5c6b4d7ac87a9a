// connect.error.json-shape: a Connect unary error is a JSON object with a code from the protocol's list.
import { fail, pass, skip, type CheckDefinition } from "../../harness/check.js";
import { CONNECT_CODES } from "../../harness/protocols/connect/index.js";
import { MALFORMED } from "../grpc/errors-malformed-request.js";
import { connectPost, describe, mediaType } from "../rpc/_internals/exchange.js";
import { CONNECT } from "../../harness/protocols/connect/index.js";

export const connectErrorJsonShape: CheckDefinition = {
  id: "connect.error.json-shape",
  title:
    "a Connect unary error answers a non-200 status with a JSON object {code, message?} whose code is one of Connect's",
  severity: "MUST",
  area: "grpc",
  profile: "protocol",
  spec: "Connect protocol (unary error response: application/json, code and message)",
  protocols: [CONNECT],
  async run(ctx) {
    // A message that does not parse: every server refuses it (grpc.errors.malformed-request judges how).
    const bad = MALFORMED[0] as (typeof MALFORMED)[number];
    const res = await connectPost(ctx, new Uint8Array(bad.bytes));
    if (res.failure) return fail(`a malformed request (${bad.what}) got ${describe(res)}`);
    if (res.status === 200)
      return skip(
        `the server served a malformed request (${bad.what}) with 200, so no error was seen ` +
          `(grpc.golden.truncated-body, which runs over Connect too, judges that)`,
      );
    const type = mediaType(res);
    if (type !== "application/json") return fail(`an error answer (${describe(res)}) is not application/json`);
    let error: unknown;
    try {
      error = JSON.parse(Buffer.from(res.body).toString("utf8"));
    } catch {
      return fail(`an error answer (${describe(res)}) is labelled JSON but does not parse as JSON`);
    }
    if (typeof error !== "object" || error === null || Array.isArray(error))
      return fail(`an error answer's JSON is not an object (${describe(res)})`);
    const { code, message } = error as { code?: unknown; message?: unknown };
    if (typeof code !== "string" || !(code in CONNECT_CODES)) {
      return fail(
        `an error answer's JSON has no code from the Connect protocol's list: code is ` +
          `${JSON.stringify(code ?? null)?.slice(0, 60)}`,
      );
    }
    if (message !== undefined && typeof message !== "string") return fail(`an error answer's message is not a string`);
    return pass(`HTTP ${res.status} application/json with code ${JSON.stringify(code)}`);
  },
};
