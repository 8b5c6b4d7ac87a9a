// Unit tests of http.auth.api-key (suites/http/auth-api-key.ts), in memory: the reference's routes started with a
// key pass, the same routes letting every request through as if it carried the key fail; no socket is opened.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReferenceHttpHandler, type ReferenceHttpHandler } from "../../../reference-server/http/handler.js";
import { authApiKey } from "../../../suites/http/auth-api-key.js";
import { defects, verdictOf } from "../../helpers/http-handlers.js";

const KEY = "conformance-key";
let reference: ReferenceHttpHandler;
beforeAll(async () => void (reference = await createReferenceHttpHandler({ apiKey: KEY })));
afterAll(() => reference.close());

describe("http.auth.api-key", () => {
  it("passes the reference's routes started with a key", async () => {
    const outcome = await verdictOf(authApiKey, reference.handler, { apiKey: KEY });
    expect(outcome.status, outcome.message).toBe("pass");
  });

  it("fails routes that let a request without the key through, saying why", async () => {
    const outcome = await verdictOf(authApiKey, defects.keyIgnored(KEY)(reference.handler), { apiKey: KEY });
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(
      /^GET \/messages without the key answered 200 OK, not 401 \(or 403\): the key is not enforced there/,
    );
  });
});
