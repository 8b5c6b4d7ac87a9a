// Where the API key goes (part 5 shows no placement): a header of any name, Authorization: Bearer, or a query
// parameter; the options that say so; a target that wants a key the run was not given.
import * as http from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { listen, startBaseServer } from "../../../fixtures/broken-servers/http/_base/server.js";
import type { StartedHttpServer } from "../../../fixtures/broken-servers/http/types.js";
import { httpImplementation, type RunningHttpImplementation } from "../../../fixtures/implementations/http/index.js";
import { createHttpTarget } from "../../../harness/targets/create-http-target.js";
import { parseApiKeyPlacement, placementFlag } from "../../../harness/targets/http-target.js";
import { checkVerdicts, cli } from "../../helpers/cli.js";

let server: StartedHttpServer | undefined;
let running: RunningHttpImplementation | undefined;
const seen: { url: string; headers: http.IncomingHttpHeaders }[] = [];
afterEach(async () => {
  await server?.close();
  await running?.close();
  server = undefined;
  running = undefined;
  seen.length = 0;
});

async function start(): Promise<string> {
  server = await listen(
    http.createServer((req, res) => (seen.push({ url: req.url ?? "", headers: req.headers }), res.end("ok"))),
  );
  return server.url;
}

describe("parseApiKeyPlacement", () => {
  it.each([
    ["bearer", { in: "header", name: "Authorization", scheme: "Bearer" }, "bearer"],
    ["header:X-Api-Token", { in: "header", name: "X-Api-Token" }, "header:X-Api-Token"],
    ["query:api_key", { in: "query", name: "api_key" }, "query:api_key"],
  ] as const)("reads %s, and spells it back", (text, placement, flag) => {
    expect(parseApiKeyPlacement(text)).toEqual(placement);
    expect(placementFlag(placement)).toBe(flag);
  });

  it.each(["cookie:k", "header:bad name", "query:", "header", "query:a&b"])("refuses %s", (text) => {
    expect(parseApiKeyPlacement(text)).toBeUndefined();
  });
});

describe("an HTTP target with a key placement", () => {
  it(
    "sends the key as Authorization: Bearer, a custom header or a query parameter; a wrong key in its place; none " +
      "when asked",
    async () => {
      const url = await start();
      const bearer = createHttpTarget({
        baseUrl: url,
        apiKey: "k 1",
        apiKeyIn: { in: "header", name: "Authorization", scheme: "Bearer" },
      });
      const query = createHttpTarget({ baseUrl: url, apiKey: "k&1", apiKeyIn: { in: "query", name: "api_key" } });
      await bearer.request({ method: "GET", path: "/messages" });
      await bearer.request({ method: "GET", path: "/messages", wrongApiKey: "nope" });
      await query.request({ method: "GET", path: "/messages?body=x" });
      await query.request({ method: "GET", path: "/messages", withoutApiKey: true });
      expect(seen.map((s) => [s.url, s.headers.authorization])).toEqual([
        ["/messages", "Bearer k 1"],
        ["/messages", "Bearer nope"],
        ["/messages?body=x&api_key=k%261", undefined],
        ["/messages", undefined],
      ]);
    },
  );

  it("replays with the spec's placeholder where the key goes, never the key", async () => {
    const url = await start();
    const bearer = createHttpTarget({
      baseUrl: url,
      apiKey: "s3cret",
      apiKeyIn: { in: "header", name: "Authorization", scheme: "Bearer" },
    });
    const query = createHttpTarget({ baseUrl: url, apiKey: "s3cret", apiKeyIn: { in: "query", name: "api_key" } });
    expect(bearer.curl({ method: "GET", path: "/messages" })).toBe(
      `curl -sS -i -H 'authorization: Bearer <API_KEY>' ${url}/messages`,
    );
    expect(query.curl({ method: "GET", path: "/messages" })).toBe(`curl -sS -i '${url}/messages?api_key=<API_KEY>'`);
  });
});

describe("check's options for HTTP targets", () => {
  it.each([
    [
      ["--http", "http://127.0.0.1:2", "--api-key-in", "cookie:k"],
      /--api-key-in cookie:k: expected header:NAME, bearer or query:NAME/,
    ],
    [
      ["--http", "http://127.0.0.1:2", "--api-key-in", "bearer", "--api-key-header", "X-K"],
      /--api-key-in and --api-key-header both say where the key goes/,
    ],
    [
      ["--http", "http://127.0.0.1:2", "--http-replica", "ftp://h"],
      /--http-replica ftp:\/\/h: only http and https URLs are supported/,
    ],
    [["--http-replica", "http://127.0.0.1:2"], /--http-replica needs --http/],
    [["--filter", "body"], /--filter needs --http/],
  ] as [string[], RegExp][])("exits 2 with one line for %j", async (args, message) => {
    const run = await cli(["check", ...args]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toMatch(message);
  });

  // A user's mistake with the key is not the server's defect: exit 5 and one line, before any check runs.
  const oneLine = (run: { stderr: string; stdout: string }) => {
    expect(run.stderr.split("\n").filter((l) => l !== "")).toHaveLength(1);
    expect(run.stdout).not.toMatch(/FAIL|not conformant/);
  };

  it("a forgotten key: exit 5, one line, before any check runs", async () => {
    const express = httpImplementation("express");
    running = await express.start({ apiKey: "wanted-key" });
    const run = await cli(["check", "--http", running.urls[0] as string, "--only", "http.*"]);
    expect(run.code).toBe(5);
    oneLine(run);
    expect(run.stderr).toMatch(
      /^example-conformance: cannot check: the target wants credentials \(GET \/messages → 401\): pass --api-key K or EXAMPLE_API_KEY/,
    );
  });

  it("a forgotten key where reading is open and only writing wants it: exit 5 naming the POST", async () => {
    // The base server wants its key everywhere; in front of it, reads are let through with the key added.
    const backend = await startBaseServer({ apiKey: "write-key" });
    try {
      const back = new URL(backend.url);
      server = await listen(
        http.createServer((req, res) => {
          const headers = {
            ...req.headers,
            ...(req.method === "GET" || req.method === "HEAD" ? { "x-api-key": "write-key" } : {}),
          };
          const forward = http.request(
            { host: back.hostname, port: back.port, path: req.url, method: req.method, headers },
            (answer) => {
              res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.headers);
              answer.pipe(res);
            },
          );
          req.pipe(forward);
        }),
      );
      const run = await cli(["check", "--http", server.url, "--only", "http.*"]);
      expect(run.code).toBe(5);
      oneLine(run);
      expect(run.stderr).toMatch(
        /cannot check: the target wants credentials \(POST \/messages → 401\): pass --api-key K/,
      );
    } finally {
      await backend.close();
    }
  });

  it(
    "a forgotten key where reading and creating are open and only replacing and deleting want it: exit 5 naming " +
      "the PUT",
    async () => {
      // The base server wants its key everywhere; in front of it, everything but PUT and DELETE is let through with the
      // key added.
      const backend = await startBaseServer({ apiKey: "change-key" });
      try {
        const back = new URL(backend.url);
        server = await listen(
          http.createServer((req, res) => {
            const headers = {
              ...req.headers,
              ...(req.method === "PUT" || req.method === "DELETE" ? {} : { "x-api-key": "change-key" }),
            };
            const forward = http.request(
              { host: back.hostname, port: back.port, path: req.url, method: req.method, headers },
              (answer) => {
                res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.headers);
                answer.pipe(res);
              },
            );
            req.pipe(forward);
          }),
        );
        const run = await cli(["check", "--http", server.url, "--only", "http.*"]);
        expect(run.code, run.stdout).toBe(5);
        oneLine(run);
        expect(run.stderr).toMatch(
          /cannot check: the target wants credentials \(PUT \/messages\/example-conformance-credentials-probe → 401\): pass --api-key K/,
        );
        // Given the key, the same target is judged: it is the reference's own key control behind a proxy.
        const keyed = await cli(["check", "--http", server.url, "--only", "http.*", "--api-key", "change-key"]);
        expect(keyed.code, keyed.stdout + keyed.stderr).not.toBe(5);
      } finally {
        await backend.close();
      }
    },
  );

  it("a wrong key: exit 5, one line, saying the key is refused wherever it goes, never showing it", async () => {
    const express = httpImplementation("express");
    running = await express.start({ apiKey: "right-key" });
    const run = await cli([
      "check",
      "--http",
      running.urls[0] as string,
      "--api-key",
      "wrong-key-123",
      "--api-key-in",
      "bearer",
      "--only",
      "http.*",
    ]);
    expect(run.code).toBe(5);
    oneLine(run);
    expect(run.stderr).toMatch(
      /cannot check: the target refuses the key sent in Authorization: Bearer \(GET \/messages → 401\), and in every other placement tried \(header:X-API-Key, header:Authorization, query:api_key, query:apikey, query:key\): check the key/,
    );
    expect(run.stderr + run.stdout).not.toContain("wrong-key-123");
  });

  it("a misplaced key: exit 5, one line, naming the placement that works", async () => {
    // Takes its key only as ?api_key=: the run sends it in X-API-Key (the default).
    const url = await listen(
      http.createServer((req, res) => {
        const key = new URL(req.url ?? "/", "http://x").searchParams.get("api_key");
        res.writeHead(key === "misplaced-key" ? 200 : 401, { "content-type": "application/json" }).end("[]");
      }),
    ).then((s) => ((server = s), s.url));
    const run = await cli(["check", "--http", url, "--api-key", "misplaced-key", "--only", "http.*"]);
    expect(run.code).toBe(5);
    oneLine(run);
    expect(run.stderr).toMatch(
      /cannot check: the target refuses the key sent in the X-API-Key header \(GET \/messages → 401\) and accepts it in the api_key query parameter \(GET \/messages → 200\): pass --api-key-in query:api_key\n$/,
    );
    expect(run.stderr + run.stdout).not.toContain("misplaced-key");
  });

  it("a key sent where the target does not look, and no placement tried works: exit 5 saying to check where it goes", async () => {
    const express = httpImplementation("express");
    running = await express.start({ apiKey: "misplaced-key" });
    const run = await cli([
      "check",
      "--http",
      running.urls[0] as string,
      "--api-key",
      "misplaced-key",
      "--only",
      "http.*",
    ]);
    expect(run.code).toBe(5);
    oneLine(run);
    expect(run.stderr).toMatch(
      /refuses the key sent in the X-API-Key header \(GET \/messages → 401\), and in every other placement tried .*: check the key, and where it goes/,
    );
  });

  it("carries the key's placement, the replicas and the filters into replay lines, with the key as <API_KEY>", async () => {
    const express = httpImplementation("express");
    running = await express.start({ apiKey: "replayed-key", defect: "key-collection-only", ports: 2 });
    const [url, replica] = running.urls as [string, string];
    const run = await checkVerdicts([
      "--http",
      url,
      "--http-replica",
      replica,
      "--api-key",
      "replayed-key",
      "--api-key-in",
      "header:X-Api-Token",
      "--filter",
      "q",
      "--only",
      "http.auth.*",
    ]);
    const replay = run.report.checks.find((c) => c.id === "http.auth.api-key")?.replay ?? "";
    // The replay is the user's own invocation, in the user's order, with the key as a placeholder.
    expect(replay).toContain(
      `--http ${url} --http-replica ${replica} --api-key '<API_KEY>' --api-key-in header:X-Api-Token --filter q ` +
        `--only http.auth.api-key`,
    );
    expect(JSON.stringify(run.report)).not.toContain("replayed-key");
  });
});
