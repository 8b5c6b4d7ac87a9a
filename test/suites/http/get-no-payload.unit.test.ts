// Unit tests of http.get.no-payload's filter probe (suites/http/get-no-payload.ts), in memory: the reference's routes,
// their ?body= filter named to the check (as --filter or an OpenAPI document names it: the reference does not
// advertise it), pass; two of the reference's mutants found by mutation testing (store.ts:141: the filter ignored,
// the filter matching nothing) fail with their reasons. No socket is opened (the unit project refuses one).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HttpHandler } from "../../../harness/targets/http-inject.js";
import { createReferenceHttpHandler, type ReferenceHttpHandler } from "../../../reference-server/http/handler.js";
import { getNoPayload } from "../../../suites/http/get-no-payload.js";
import { verdictOf } from "../../helpers/http-handlers.js";

let reference: ReferenceHttpHandler;
const dir = mkdtempSync(join(tmpdir(), "get-no-payload-"));
const openapi = join(dir, "openapi.json");
beforeAll(async () => {
  writeFileSync(
    openapi,
    JSON.stringify({
      openapi: "3.0.0",
      paths: {
        "/messages": { get: { parameters: [{ in: "query", name: "body", schema: { type: "string" } }] } },
        "/messages/{id}": {},
      },
    }),
  );
  reference = await createReferenceHttpHandler();
});
afterAll(async () => {
  await reference.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The collection's ?body= edited before the reference serves it. */
function editFilter(h: HttpHandler, edit: (query: URLSearchParams) => void): HttpHandler {
  return (req, res) => {
    const url = new URL(req.url ?? "/", "http://in-memory");
    if (url.pathname === "/messages" && url.searchParams.has("body")) {
      edit(url.searchParams);
      const query = url.searchParams.toString();
      req.url = `${url.pathname}${query === "" ? "" : `?${query}`}`;
    }
    h(req, res);
  };
}

describe("http.get.no-payload, its ?body= filter named", () => {
  it("passes the reference's routes, whose filter selects one of two new messages", async () => {
    const outcome = await verdictOf(getNoPayload, reference.handler, { openapi });
    expect(outcome.status, outcome.message).toBe("pass");
    expect(outcome.message).toMatch(/\?body= selects one of two new messages/);
  });

  it("fails the filter ignored (the mutant store.ts:141:36, false), saying why", async () => {
    const outcome = await verdictOf(
      getNoPayload,
      editFilter(reference.handler, (q) => q.delete("body")),
      { openapi },
    );
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(/also lists a message with another body.*: the filter changed nothing/);
  });

  it("fails the filter matching nothing (the mutant store.ts:141:65, true), saying why", async () => {
    const outcome = await verdictOf(
      getNoPayload,
      editFilter(reference.handler, (q) => q.set("body", `${q.get("body") ?? ""} and no other`)),
      { openapi },
    );
    expect(outcome.status, outcome.message).toBe("fail");
    expect(outcome.message).toMatch(/leaves out the message whose body it names/);
  });
});
