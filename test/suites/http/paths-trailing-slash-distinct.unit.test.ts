// Unit tests of http.paths.trailing-slash-distinct (suites/http/paths-trailing-slash-distinct.ts), in memory: the
// reference's routes pass, a hand-written defect fails with its reason; no socket is opened (the unit project refuses
// one).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReferenceHttpHandler, type ReferenceHttpHandler } from "../../../reference-server/http/handler.js";
import { pathsTrailingSlashDistinct } from "../../../suites/http/paths-trailing-slash-distinct.js";
import { defects, verdictOf } from "../../helpers/http-handlers.js";

let reference: ReferenceHttpHandler;
beforeAll(async () => void (reference = await createReferenceHttpHandler()));
afterAll(() => reference.close());

describe("http.paths.trailing-slash-distinct", () => {
  it("passes the reference's routes", async () => {
    const outcome = await verdictOf(pathsTrailingSlashDistinct, reference.handler);
    expect(outcome.status, outcome.message).toBe("pass");
    // A pass names its evidence: a check that judged nothing says nothing.
    expect(outcome.message).not.toBe("");
  });

  it("fails a path with a trailing slash served as the path without it, saying why", async () => {
    const outcome = await verdictOf(pathsTrailingSlashDistinct, defects.trailingSlashAlias(reference.handler));
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(/^GET \/messages\/ answered 200 OK: a different path is served as \/messages/);
  });
});
