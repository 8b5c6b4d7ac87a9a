// Unit tests of http.auth.api-key (suites/http/auth-api-key.ts), in memory: the reference's routes started with a
// key pass, the same routes letting every request through as if it carried the key fail; no socket is opened.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReferenceHttpHandler, type ReferenceHttpHandler } from "../../../reference-server/http/handler.js";
import { authApiKey } from "../../../suites/http/auth-api-key.js";
import { defects, editAnswer, verdictOf } from "../../helpers/http-handlers.js";

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

  it("fails a 401 without a WWW-Authenticate challenge (RFC 9110 §11.6.1), saying why", async () => {
    const noChallenge = editAnswer(reference.handler, (_req, a) => void delete a.headers["www-authenticate"]);
    const outcome = await verdictOf(authApiKey, noChallenge, { apiKey: KEY });
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(
      /^GET \/messages without the key answered 401 without a WWW-Authenticate challenge: a 401 must name how to authenticate \(RFC 9110 §11\.6\.1\)/,
    );
  });

  it("passes routes that refuse a request without the key with 403 and no challenge", async () => {
    const forbidden = editAnswer(reference.handler, (_req, a) => {
      if (a.status !== 401) return;
      a.status = 403;
      delete a.headers["www-authenticate"];
    });
    const outcome = await verdictOf(authApiKey, forbidden, { apiKey: KEY });
    expect(outcome.status, outcome.message).toBe("pass");
  });
});
