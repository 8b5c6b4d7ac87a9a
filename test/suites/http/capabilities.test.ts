// What a run learns a target offers reaches the JSON report and the console: a store that creates by PUT, a
// message that refuses replacement, each with the answers that showed it.
import { afterEach, describe, expect, it } from "vitest";
import { startBaseServer } from "../../../fixtures/broken-servers/http/_base/server.js";
import type { StartedHttpServer } from "../../../fixtures/broken-servers/http/types.js";
import { checkVerdicts } from "../../helpers/cli.js";

let server: StartedHttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("the capabilities a run learns", () => {
  it("names a store's creation by PUT, with its evidence, in the report and on the console", async () => {
    server = await startBaseServer({ store: true });
    const run = await checkVerdicts(["--http", server.url, "--only", "http.*"]);
    expect(run.failed).toEqual([]);
    const learned = Object.fromEntries((run.report.capabilities ?? []).map((r) => [r.resource, r.operations]));
    expect(learned["/messages"]?.["create"]).toMatch(
      /^by PUT at an id the client chooses \(a store\): POST \/messages answered 405 \(Allow: GET, HEAD\); PUT \/messages\/[^ ]+ answered 201 and GET shows it$/,
    );
    expect(run.stdout).toMatch(/^learned: \/messages: create by PUT at an id the client chooses/m);
  });

  it("names a message's refused replacement, with the 405 and its Allow, and the model walks the rest", async () => {
    server = await startBaseServer({ noReplace: true });
    const run = await checkVerdicts(["--http", server.url, "--only", "http.*"]);
    expect(run.failed).toEqual([]);
    const learned = Object.fromEntries((run.report.capabilities ?? []).map((r) => [r.resource, r.operations]));
    expect(learned["/messages/{id}"]?.["replace"]).toMatch(
      /^not offered: PUT \/messages\/[^ ]+ answered 405 \(Allow: GET, HEAD, DELETE\)$/,
    );
    const model = run.report.checks.find((c) => c.id === "http.model.stateful");
    expect(model).toMatchObject({
      status: "pass",
      message: expect.stringContaining("not offered, by the server's own answer: replace"),
    });
  });

  it("records a collection that creates by POST, and nothing learned is reported when no HTTP check ran", async () => {
    server = await startBaseServer();
    const run = await checkVerdicts(["--http", server.url, "--only", "http.create.*"]);
    expect(run.report.capabilities).toEqual([{ resource: "/messages", operations: { create: "by POST (201)" } }]);
  });
});
