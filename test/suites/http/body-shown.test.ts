// A representation that leaves out the body the probe created is reported as having none, in words a reader
// understands, by every check that compares it: never as the word "undefined".
import * as http from "node:http";
import { afterEach, expect, it } from "vitest";
import { listen } from "../../../fixtures/broken-servers/http/_base/server.js";
import type { StartedHttpServer } from "../../../fixtures/broken-servers/http/types.js";
import { createLocation } from "../../../suites/http/create-location.js";
import { negotiationAccept } from "../../../suites/http/negotiation-accept.js";
import { readAfterCreate } from "../../../suites/http/read-after-create.js";
import { runHttpChecks } from "../../helpers/http-context.js";

let server: StartedHttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Creates messages, and represents each, as JSON or XML, by its id alone. */
function bodiless(): Promise<StartedHttpServer> {
  let next = 0;
  return listen(
    http.createServer((req, res) => {
      const id = /^\/messages\/(\d+)$/.exec(req.url ?? "")?.[1];
      if (req.method === "POST" && req.url === "/messages") {
        req.resume().on("end", () => {
          next++;
          res
            .writeHead(201, { location: `/messages/${next}`, "content-type": "application/json" })
            .end(JSON.stringify({ id: next }));
        });
      } else if (req.method === "GET" && id !== undefined) {
        const accept = req.headers.accept ?? "";
        if (accept.includes("xml"))
          res.writeHead(200, { "content-type": "application/xml" }).end(`<message><id>${id}</id></message>`);
        else if (accept.includes("json") || accept === "")
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ id: Number(id) }));
        else res.writeHead(406).end();
      } else res.writeHead(404).end();
    }),
  );
}

it("says 'shows no body' when a read representation, JSON or XML, parses but carries no body", async () => {
  server = await bodiless();
  const verdicts = await runHttpChecks([readAfterCreate, createLocation, negotiationAccept], server.url);
  for (const v of verdicts) {
    expect(v.outcome.status).toBe("fail");
    expect(v.outcome.message).toMatch(/ shows no body, not the "conformance-create-[^"]+" that was (created|sent)/);
    expect([v.outcome.message, ...(v.outcome.details ?? [])].join("\n")).not.toContain("undefined");
  }
  // Each negotiated representation is compared: the XML one is named beside the JSON one.
  const accept = verdicts.find((v) => v.id === "http.negotiation.accept")?.outcome;
  expect(accept?.details?.some((d) => /as XML shows no body, not the "conformance-create-/.test(d))).toBe(true);
});
