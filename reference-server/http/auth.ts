// The API key check: X-API-Key compared in constant time, and the 401 that names the scheme without hinting at the key.
//
// Scheme: `WWW-Authenticate: ApiKey realm="example", header="X-API-Key"`. The spec leaves the key's placement
// open (part 5); a header keeps it out of URLs, and so out of access logs, browser history and Referer.
import { createHash, timingSafeEqual } from "node:crypto";
import { HttpError } from "./errors.js";

export const API_KEY_HEADER = "x-api-key";
export const WWW_AUTHENTICATE = 'ApiKey realm="example", header="X-API-Key"';

/** Throws the 401 unless the request's header value is the key. */
export type ApiKeyCheck = (given: string | string[] | undefined) => void;

export function createApiKeyCheck(apiKey: string): ApiKeyCheck {
  if (apiKey === "") throw new Error("the API key must not be empty");
  // Digests have one length whatever the key's, so neither the comparison nor its refusal of unequal lengths
  // tells a caller how long the key is.
  const expected = digest(apiKey);
  return (given) => {
    // A repeated header is refused rather than picking one: proxies disagree about which one counts.
    const value = typeof given === "string" ? given : "";
    const matches = timingSafeEqual(digest(value), expected);
    if (!matches || value === "") {
      // One message for a missing and a wrong key: the answer says nothing about the key.
      throw new HttpError(401, "this resource needs a valid API key in the X-API-Key header", {
        "www-authenticate": WWW_AUTHENTICATE,
        "cache-control": "no-store",
      });
    }
  };
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}
