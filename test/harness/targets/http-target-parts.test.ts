// The HTTP target's parts on their own: the base URL and where it connects, and the curl line that repeats a request.
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { endpointOf, parseHttpBaseUrl } from "../../../harness/targets/http-base-url.js";
import { API_KEY_PLACEHOLDER, renderCurl } from "../../../harness/targets/http-curl.js";

describe("the base URL", () => {
  it.each([
    ["http://127.0.0.1:8080/api", { host: "127.0.0.1", port: 8080 }],
    ["https://example.test", { host: "example.test", port: 443 }],
    ["http://[::1]/", { host: "::1", port: 80 }],
  ])("%s connects to %j", (url, endpoint) => {
    expect(endpointOf(parseHttpBaseUrl(url))).toEqual(endpoint);
  });

  it.each([
    ["ftp://h/", /only http and https/],
    ["http://u:p@h/", /credentials in the URL/],
    ["http://h/?q=1", /no query or fragment/],
    ["nope", /not a valid URL/],
  ])("refuses %s naming the flag", (url, why) => {
    expect(() => parseHttpBaseUrl(url, "--http-replica")).toThrow(
      new RegExp(`^--http-replica ${url.replace(/[?.*+]/g, "\\$&")}: .*${why.source}`),
    );
  });
});

describe("the curl line", () => {
  it("shows the run's key as its placeholder in every header, wherever a probe put it", () => {
    const line = renderCurl({
      req: { method: "GET", path: "/m" },
      headers: { "user-agent": "x", "x-api-key": API_KEY_PLACEHOLDER, authorization: "Bearer s3cret" },
      url: "http://h/m?key=<API_KEY>",
      apiKey: "s3cret",
    });
    expect(line).toBe(
      "curl -sS -i -H 'x-api-key: <API_KEY>' -H 'authorization: Bearer <API_KEY>' 'http://h/m?key=<API_KEY>'",
    );
  });

  it("sends bytes a shell string cannot hold through printf, which reproduces them exactly", () => {
    const bytes = Uint8Array.from([0x0a, 0x00, 0xff, 0x27, 0x5c, 0x41]);
    const line = renderCurl({ req: { method: "POST", path: "/m", body: bytes }, headers: {}, url: "http://h/m" });
    const printf = /^(printf '[^']*') \| curl .* --data-binary @- http:\/\/h\/m$/.exec(line);
    expect(printf).not.toBeNull();
    expect([...execFileSync("sh", ["-c", printf?.[1] as string])]).toEqual([...bytes]);
  });
});
