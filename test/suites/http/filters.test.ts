// Rule 11 says where filters go, not which exist: the filter probe judges one the server offers, from --filter, the
// OpenAPI document or a URI template in its links, and only notes a guess that does not filter.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, expect, it } from "vitest";
import { httpImplementation, type RunningHttpImplementation } from "../../../fixtures/implementations/http/index.js";
import { checkVerdicts } from "../../helpers/cli.js";

let running: RunningHttpImplementation | undefined;
const dir = mkdtempSync(join(tmpdir(), "filters-"));
afterEach(async () => {
  await running?.close();
  running = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function openapi(names: string[]): string {
  const file = join(dir, `${names.join("-")}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      openapi: "3.0.0",
      paths: {
        "/messages": { get: { parameters: names.map((name) => ({ in: "query", name, schema: { type: "string" } })) } },
        "/messages/{id}": {},
      },
    }),
  );
  return file;
}

async function verdict(args: string[]) {
  running = await httpImplementation("koa").start();
  const run = await checkVerdicts(["--http", running.urls[0] as string, ...args, "--only", "http.get.no-payload"]);
  return run.report.checks.find((c) => c.id === "http.get.no-payload");
}

it("judges a filter the OpenAPI document gives the collection's GET", async () => {
  expect(await verdict(["--openapi", openapi(["contains"])])).toMatchObject({
    status: "pass",
    message: expect.stringMatching(/\?contains= selects one of two new messages/),
  });
});

it("fails a filter the OpenAPI document promises and the server ignores", async () => {
  expect(await verdict(["--openapi", openapi(["tag"])])).toMatchObject({
    status: "fail",
    message: expect.stringMatching(
      /GET \/messages\?tag=.* also lists a message with another body: the filter changed nothing/,
    ),
  });
});

it("passes, noting that the filter part was not judged, when no filter is offered and ?body= does not filter", async () => {
  expect(await verdict([])).toMatchObject({
    status: "pass",
    message: expect.stringMatching(
      /need no body; no filter offered .* \?body= does not filter: the filter part of rule 11 is not judged/,
    ),
  });
});
