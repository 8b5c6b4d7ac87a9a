// The HTTP credentials probe before a run: its four asks (read, create, replace, delete) go side by side, one round
// trip through a slow link instead of four, and the refusal it tells is still the first in that order.
import { describe, expect, it } from "vitest";
import { ConformanceError } from "../../../harness/errors.js";
import { probeHttpCredentials } from "../../../harness/targets/http-credentials.js";
import type { HttpRequest, HttpResponse, HttpTarget } from "../../../harness/targets/http-target.js";

/** A target that answers each request a tick later with the status `statusOf` gives, counting requests in flight. */
function fakeTarget(statusOf: (req: HttpRequest) => number) {
  const seen = { inFlight: 0, most: 0, methods: [] as string[] };
  const target: HttpTarget = {
    baseUrl: "http://fake",
    callCount: 0,
    async request(req) {
      seen.methods.push(req.method);
      seen.most = Math.max(seen.most, ++seen.inFlight);
      await new Promise((r) => setImmediate(r));
      seen.inFlight--;
      const status = statusOf(req);
      return { status, statusText: "", headers: {}, body: new Uint8Array(), text: "" } as HttpResponse;
    },
    curl: () => "curl",
    close: async () => undefined,
  };
  return { target, seen };
}

const options = (keyGiven: boolean) => ({
  collection: "/messages",
  keyGiven,
  placement: { in: "header" as const, name: "x-api-key" },
  withPlacement: () => fakeTarget(() => 401).target,
});

describe("probeHttpCredentials", () => {
  it("asks its four questions side by side, and returns when none is refused", async () => {
    const { target, seen } = fakeTarget((req) => (req.method === "GET" ? 200 : req.method === "POST" ? 400 : 404));
    await probeHttpCredentials(target, options(false));
    expect(seen.methods).toEqual(["GET", "POST", "PUT", "DELETE"]);
    expect(seen.most).toBe(4);
  });

  it("tells the first refusal in its order, whichever answered first", async () => {
    // Create and delete want a key; the create is the one told, as when the asks went one after another.
    const { target } = fakeTarget((req) => (req.method === "POST" || req.method === "DELETE" ? 401 : 200));
    const err = await probeHttpCredentials(target, options(false)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConformanceError);
    expect((err as ConformanceError).message).toMatch(/wants credentials \(POST \/messages/);
  });
});
