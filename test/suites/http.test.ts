// The HTTP suite's verdicts: correct servers pass, each broken server fails exactly its checks, json-server's verdicts
// explained.
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { startBaseServer } from "../../fixtures/broken-servers/http/_base/server.js";
import { brokenHttpServers } from "../../fixtures/broken-servers/http/index.js";
import type { StartedHttpServer } from "../../fixtures/broken-servers/http/types.js";
import { startHttpServer } from "../../reference-server/http/server.js";
import { httpChecks } from "../../suites/http/index.js";
import { failing, runHttpChecks, type HttpVerdict } from "../helpers/http-context.js";
import { checkVerdicts } from "../helpers/cli.js";
import { startJsonServer } from "../helpers/http-json-server.js";
import { skipIfMissing } from "../helpers/toolchain.js";

let server: StartedHttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const statusOf = (verdicts: readonly HttpVerdict[], id: string) => verdicts.find((v) => v.id === id)?.outcome;
const NO_REPLICA =
  "http.stateless.replicas: skip no other instance given (--http-replica URL), so statelessness across replicas " +
  "was not judged";
const notPassing = (verdicts: readonly HttpVerdict[]) =>
  verdicts.filter((v) => v.outcome.status !== "pass").map((v) => `${v.id}: ${v.outcome.status} ${v.outcome.message}`);

describe("a correct server", () => {
  it("passes every HTTP check of the base server; the API key check skips, saying why, when no key was given", async () => {
    server = await startBaseServer();
    const verdicts = await runHttpChecks(httpChecks, server.url);
    expect(notPassing(verdicts)).toEqual([
      // No key control at all: not applicable (§5 "where access to data is controlled"), and no flag would judge it.
      "http.auth.api-key: skip no key control to judge: /messages and a message in it were read, created, " +
        "replaced and deleted with no key (§5 applies only where access to data is controlled by a key)",
      NO_REPLICA,
    ]);
    expect(statusOf(verdicts, "http.maturity")?.message).toMatch(/^level 3 \(REST API\)/);
  });

  it("passes every HTTP check, the API key one included, when started with a key", async () => {
    server = await startBaseServer({ apiKey: "conformance-key" });
    const verdicts = await runHttpChecks(httpChecks, server.url, { apiKey: "conformance-key" });
    expect(notPassing(verdicts)).toEqual([NO_REPLICA]);
  });

  it("reports level 2, and passes, for a server with the right methods and codes but no links", async () => {
    server = await startBaseServer({ links: false });
    const verdicts = await runHttpChecks(httpChecks, server.url);
    expect(statusOf(verdicts, "http.maturity")).toMatchObject({
      status: "pass",
      message: expect.stringMatching(/^level 2 \(HTTP API\), short of the next: no links/),
    });
    expect(failing(verdicts)).toEqual([]);
  });

  it(
    "passes every HTTP check when a message is represented as JSON:API (data.attributes.body), saying where the " +
      "body was found",
    async () => {
      server = await startBaseServer({ jsonApi: true });
      const verdicts = await runHttpChecks(httpChecks, server.url);
      expect(failing(verdicts)).toEqual([]);
      expect(statusOf(verdicts, "http.read.after-create")?.message).toContain(
        // XML too: the check reads its long bodies back in both formats, and the base server's XML wraps the same
        // shape in <resource>.
        "a message's body is read JSON at data.attributes.body, XML at resource.data.attributes.body (where the run " +
          "found the body it sent)",
      );
      expect(statusOf(verdicts, "http.maturity")?.message).toMatch(/^level 3 \(REST API\)/);
    },
  );

  it(
    "passes every HTTP check when a message's related resource is a read-only collection, which is found and named " +
      "as not exercised",
    async () => {
      server = await startBaseServer({ relatedName: "replies", relatedListing: true });
      const verdicts = await runHttpChecks(httpChecks, server.url);
      expect(failing(verdicts)).toEqual([]);
      expect(statusOf(verdicts, "http.create.status-201")?.message).toMatch(
        /\/messages\/\{id\}\/replies \(.*\) was not exercised: POST \/messages\/[^ ]+\/replies answered 405: read-only/,
      );
    },
  );

  it(
    "passes every HTTP check of a store: POST on the collection answered 405 with Allow, messages created by PUT " +
      "at an id the client chooses",
    async () => {
      server = await startBaseServer({ store: true });
      const verdicts = await runHttpChecks(httpChecks, server.url);
      expect(failing(verdicts)).toEqual([]);
      expect(statusOf(verdicts, "http.create.status-201")?.message).toContain("PUT /messages/");
    },
  );

  it(
    "judges a resource that does not offer replacement not applicable, naming the 405 and its Allow, and fails " +
      "nothing",
    async () => {
      server = await startBaseServer({ noReplace: true });
      const verdicts = await runHttpChecks(httpChecks, server.url);
      expect(failing(verdicts)).toEqual([]);
      expect(statusOf(verdicts, "http.update.put")).toMatchObject({
        status: "skip",
        message: expect.stringMatching(
          /^not applicable: .*PUT \/messages\/[^ ]+ answered 405 \(Allow: GET, HEAD, DELETE\)/,
        ),
      });
    },
  );

  it(
    "passes every HTTP check of a server that asks for conditional requests (428 without If-Match), sending its " +
      "ETag back",
    async () => {
      server = await startBaseServer({ conditional: true });
      const verdicts = await runHttpChecks(httpChecks, server.url);
      expect(failing(verdicts)).toEqual([]);
    },
  );

  it(
    "passes every HTTP check, the API key one included, when OPTIONS answers a preflight without the key (204, " +
      "Allow, no data)",
    async () => {
      server = await startBaseServer({ apiKey: "conformance-key", optionsPreflight: true });
      const verdicts = await runHttpChecks(httpChecks, server.url, { apiKey: "conformance-key" });
      expect(notPassing(verdicts)).toEqual([NO_REPLICA]);
    },
  );

  it("passes every HTTP check against the reference server with its key, at level 3", async () => {
    const reference = await startHttpServer({ port: 0, apiKey: "reference-key", log: "silent" });
    server = reference;
    const verdicts = await runHttpChecks(httpChecks, reference.url, { apiKey: "reference-key" });
    expect(notPassing(verdicts)).toEqual([NO_REPLICA]);
    expect(statusOf(verdicts, "http.maturity")?.message).toMatch(/^level 3 \(REST API\)/);
  });
});

const caught = new Map<string, string[]>();
afterAll(() => {
  if (caught.size > 0) {
    const n = [...caught.values()].filter((ids) => ids.length > 0).length;
    console.log(`HTTP defects caught: ${n}/${caught.size} (${Math.round((100 * n) / caught.size)}%)`);
  }
});

describe.each(brokenHttpServers)("broken HTTP server $name", (broken) => {
  it(`fails exactly [${broken.mustFail.join(", ")}]: ${broken.defect}`, async (t) => {
    await skipIfMissing(broken, (why) => t.skip(why));
    server = await broken.start();
    const run = await checkVerdicts([
      "--http",
      server.url,
      ...(server.replicas ?? []).flatMap((r) => ["--http-replica", r]),
      ...(broken.args ?? []),
      ...(broken.apiKey !== undefined ? ["--api-key", broken.apiKey] : []),
      "--only",
      "http.*",
      "--strict",
    ]);
    // Only the defect's own checks count as caught; a stack's legal SHOULD findings are expected beside them.
    const also = new Set(broken.alsoFails ?? []);
    caught.set(
      broken.name,
      run.failed.filter((id) => !also.has(id)),
    );
    expect(run.failed).toEqual([...broken.mustFail, ...also].sort());
    expect(run.code).toBe(1);
    // Every failure says how to see it again: the command line, and the request as curl.
    for (const c of run.report.checks.filter((x) => x.status === "fail")) {
      expect(c.replay).toContain(`--http ${server.url}`);
      const urls = [server.url, ...(server.replicas ?? [])];
      expect(c.details?.some((d) => d.includes(`curl -sS -i`) && urls.some((u) => d.includes(u)))).toBe(true);
    }
  });
});

describe("coverage of the suite", () => {
  it("has a broken server for every HTTP check", () => {
    const declared = new Set(brokenHttpServers.flatMap((b) => b.mustFail));
    expect(httpChecks.map((c) => c.id).filter((id) => !declared.has(id))).toEqual([]);
  });

  it("names a spec rule in every check and has unique IDs", () => {
    for (const c of httpChecks) expect(c.spec).toMatch(/§\d/);
    expect(new Set(httpChecks.map((c) => c.id)).size).toBe(httpChecks.length);
  });
});

describe("json-server 0.17.4 with { messages: [] }, checked as a new user would (no OpenAPI, no key)", () => {
  it("gets the verdicts its behaviour deserves", async () => {
    // Its router logs a stack trace for each malformed body it cannot parse; the verdict below is what matters.
    const quiet = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      server = await startJsonServer();
      const verdicts = await runHttpChecks(httpChecks, server.url);
      const verdict = (id: string) => statusOf(verdicts, id);

      // Discovery: its root is an HTML page for people (not followed); the collection and the item it created are
      // /messages and /messages/{id} (ids are numbers it assigns), which follow every static path rule.
      for (const id of httpChecks
        .filter((c) => c.id.startsWith("http.paths.") && !/distinct|served|sensitive/.test(c.id))
        .map((c) => c.id)) {
        expect(verdict(id)).toMatchObject({ status: "pass", message: "2 paths judged: /messages, /messages/{id}" });
      }
      // POST answers 201 Created with an absolute Location on the same origin, which GETs the created message.
      expect(verdict("http.create.status-201")?.status).toBe("pass");
      expect(verdict("http.create.location")?.message).toMatch(
        /Location http:\/\/127\.0\.0\.1:\d+\/messages\/1 → GET 200/,
      );
      // GET, PUT (replaces the whole object), DELETE (200, then 404) and HEAD (Express answers HEAD with GET's
      // headers and no body) all behave.
      for (const id of ["http.read.after-create", "http.update.put", "http.delete.then-404", "http.head.matches-get"])
        expect(verdict(id)?.status).toBe("pass");
      // An unsupported method falls through its router to 404 Not Found: no 405 and no Allow.
      expect(verdict("http.methods.405-allow")).toMatchObject({
        status: "fail",
        message: expect.stringMatching(/PATCH \/messages.*answered 404 Not Found, not 405/),
      });
      // Express routes are neither strict nor case-sensitive by default: /messages/ and /MESSAGES serve the collection.
      expect(verdict("http.paths.trailing-slash-distinct")).toMatchObject({
        status: "fail",
        message: expect.stringMatching(/GET \/messages\/ answered 200 OK/),
      });
      expect(verdict("http.paths.case-sensitive")).toMatchObject({
        status: "fail",
        message: expect.stringMatching(/GET \/MESSAGES answered 200 OK/),
      });
      // /messages.json is no route and /messages/1.json is an id that does not exist: 404 both.
      expect(verdict("http.paths.extension-not-served")?.status).toBe("pass");
      // It filters on any field in the query: ?body=X selects exactly the messages whose body is X.
      expect(verdict("http.get.no-payload")?.status).toBe("pass");
      // It answers JSON whatever Accept asks for: XML and image/png both get 200 application/json.
      expect(verdict("http.negotiation.accept")).toMatchObject({
        status: "fail",
        message: expect.stringMatching(/Accept: application\/xml answered 200 OK with Content-Type application\/json/),
      });
      // Its body parser skips types it does not know, so a text/plain POST stores an empty object: 201.
      expect(verdict("http.content-type.415")).toMatchObject({
        status: "fail",
        message: expect.stringMatching(/text\/plain answered 201 Created/),
      });
      // The JSON parser's SyntaxError reaches its router's error handler, which answers 500 with the stack trace.
      expect(verdict("http.errors.malformed-400")).toMatchObject({
        status: "fail",
        message: expect.stringMatching(/answered 500 Internal Server Error/),
      });
      // It has no schema: {"body": 42} and an array are both stored (201) rather than refused (an empty body, which
      // a server may read as {}, is not judged).
      expect(verdict("http.errors.client-error-class")).toMatchObject({
        status: "fail",
        message: expect.stringMatching(/a body that is a number .* answered 201 Created, not a 4xx \(and 1 more\)/),
      });
      // Its body parser skips XML, so XML that is not even UTF-8 stores an empty object (201), where XML 1.0 makes
      // such a document a fatal error; a body XML cannot carry it answers as JSON whatever Accept asks (legal).
      expect(verdict("http.xml.well-formed")).toMatchObject({
        status: "fail",
        message: expect.stringMatching(
          /C3 28 FF, not UTF-8 answered 201 Created: a document not in its encoding is a fatal error/,
        ),
      });
      expect(verdict("http.xml.well-formed")?.message).not.toMatch(/U\+0001 and U\+FFFF/);
      // Node writes the standard reason phrases.
      expect(verdict("http.status.reason-phrase")?.status).toBe("pass");
      // No key was given, so the key check has nothing to hold it to.
      expect(verdict("http.auth.api-key")?.status).toBe("skip");
      // It sets no cookie and keeps no client context.
      expect(verdict("http.stateless.no-session")?.status).toBe("pass");
      // 201 on create, 404 for an unknown id and after DELETE: an HTTP API; its representations carry no links.
      expect(verdict("http.maturity")).toMatchObject({
        status: "pass",
        message: expect.stringMatching(/^level 2 \(HTTP API\)/),
      });

      expect(failing(verdicts)).toEqual([
        "http.content-type.415",
        "http.errors.client-error-class",
        "http.errors.malformed-400",
        "http.methods.405-allow",
        "http.negotiation.accept",
        "http.paths.case-sensitive",
        "http.paths.trailing-slash-distinct",
        "http.xml.well-formed",
      ]);
    } finally {
      quiet.mockRestore();
    }
  });
});
