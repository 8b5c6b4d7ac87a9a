// Unit tests of http.paths.extension-not-served (suites/http/paths-extension-not-served.ts), in memory: the reference's
// routes pass, a hand-written defect fails with its reason; no socket is opened (the unit project refuses one).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReferenceHttpHandler, type ReferenceHttpHandler } from "../../../reference-server/http/handler.js";
import { pathsExtensionNotServed } from "../../../suites/http/paths-extension-not-served.js";
import { defects, verdictOf } from "../../helpers/http-handlers.js";

let reference: ReferenceHttpHandler;
beforeAll(async () => void (reference = await createReferenceHttpHandler()));
afterAll(() => reference.close());

describe("http.paths.extension-not-served", () => {
  it("passes the reference's routes", async () => {
    const outcome = await verdictOf(pathsExtensionNotServed, reference.handler);
    expect(outcome.status, outcome.message).toBe("pass");
    // A pass names its evidence: a check that judged nothing says nothing.
    expect(outcome.message).not.toBe("");
  });

  it("fails a path with .json or .xml served as the path without it, saying why", async () => {
    const outcome = await verdictOf(pathsExtensionNotServed, defects.extensionAlias(reference.handler));
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(
      /^GET \/messages\.json answered 200 OK, not 404 \(a 4xx\): the extension is served as a representation/,
    );
  });
});
