// Options are resolved once: every default of a run lives in harness/run-config.ts and is read nowhere else but
// where the CLI shows it in --help. The engine, the session and the targets take the resolved configuration.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../contract/paths.js";
import { runCheck } from "../harness/session.js";
import {
  LOAD_DEFAULTS,
  resolveGrpcTarget,
  resolveLoadOptions,
  resolveRunConfig,
  RUN_DEFAULTS,
} from "../harness/run-config.js";
import { catalogue } from "../suites/index.js";
import { httpContext } from "./helpers/http-context.js";
import { productFiles } from "./architecture-source.js";

const RESOLVER = "harness/run-config.ts";
/** The CLI's option tables: they show the defaults in --help (and hand commander the same values). */
const SHOWN_IN_HELP = ["harness/cli/check-options.ts", "harness/cli/option-table.ts", "harness/cli/load-options.ts"];
/** The names the defaults had before they were resolved once: none may come back. */
const OLD_NAMES = [
  "DEFAULT_TIMEOUT_MS",
  "DEFAULT_MAX_CALLS",
  "DEFAULT_REMOTE_RATE",
  "DEFAULT_COLLECTIONS",
  "DEFAULT_API_KEY_HEADER",
  "DEFAULT_API_KEY_PLACEMENT",
  "DEFAULT_MAX_DISCOVERY_REQUESTS",
  "DEFAULT_RUNS",
  "DEFAULT_CHECK_TIMEOUT_MS",
  "DEFAULT_CONCURRENCY",
];

const files = productFiles(["harness", "suites"]);
const text = new Map(files.map((f) => [f, readFileSync(join(PACKAGE_ROOT, f), "utf8")]));

describe("defaults", () => {
  it("are read only by the resolving function and the --help tables", () => {
    for (const name of ["RUN_DEFAULTS", "LOAD_DEFAULTS"]) {
      const users = files.filter((f) => new RegExp(`\\b${name}\\b`).test(text.get(f) as string));
      expect(users).toContain(RESOLVER);
      expect([name, users.filter((f) => f !== RESOLVER && !SHOWN_IN_HELP.includes(f))]).toEqual([name, []]);
    }
  });

  it("have no second copy under an old name or as a literal fallback", () => {
    const found = files.flatMap((f) => {
      const t = text.get(f) as string;
      const names = OLD_NAMES.filter((n) => new RegExp(`\\b${n}\\b`).test(t)).map((n) => `${f} ${n}`);
      const literals = [...t.matchAll(/\?\?\s*(5000|5_000|10_000)\b/g)].map((m) => `${f} ?? ${m[1]}`);
      return [...names, ...literals];
    });
    expect(found).toEqual([]);
  });

  it("resolve into a read-only configuration with every default applied", () => {
    const config = resolveRunConfig(
      { checks: [], grpc: { address: "127.0.0.1:1" }, http: { baseUrl: "http://127.0.0.1:2" } },
      () => 7,
    );
    expect(Object.isFrozen(config)).toBe(true);
    expect([config.seed, config.runs, config.concurrency, config.checkTimeoutMs]).toEqual([
      7,
      RUN_DEFAULTS.runs,
      RUN_DEFAULTS.concurrency,
      RUN_DEFAULTS.checkTimeoutMs,
    ]);
    expect(config.grpc).toMatchObject({
      protocol: "grpc",
      timeoutMs: RUN_DEFAULTS.timeoutMs,
      maxCalls: RUN_DEFAULTS.maxCalls,
      rate: Infinity,
      metadata: {},
    });
    // The HTTP target's base URL is parsed once, where the run is resolved, and carried typed.
    expect(config.http?.url).toEqual(new URL("http://127.0.0.1:2"));
    expect(config.http).toMatchObject({
      collections: RUN_DEFAULTS.collections,
      apiKeyIn: { in: "header", name: RUN_DEFAULTS.apiKeyHeader },
      timeoutMs: RUN_DEFAULTS.timeoutMs,
      replicas: [],
    });
    expect(config.session).toMatchObject({
      parallelism: RUN_DEFAULTS.concurrency,
      timeoutMs: RUN_DEFAULTS.timeoutMs,
      replicas: [],
    });
    // A remote target is rate-limited by default; the HTTP target's timeout follows the RPC target's.
    expect(resolveGrpcTarget({ address: "example.com:443" }).rate).toBe(RUN_DEFAULTS.remoteRate);
    const given = resolveRunConfig(
      { checks: [], grpc: { address: "127.0.0.1:1", timeoutMs: 700 }, http: { baseUrl: "http://127.0.0.1:2" } },
      () => 1,
    );
    expect(given.http?.timeoutMs).toBe(700);
  });
});

describe("load's options", () => {
  it(
    "resolve beside the run's: check's timeout and collection, every other default from LOAD_DEFAULTS, the target " +
      "parsed once",
    () => {
      const grpc = resolveLoadOptions({ address: "127.0.0.1:1" });
      expect(Object.isFrozen(grpc)).toBe(true);
      expect(grpc).toMatchObject({
        protocol: "grpc",
        flag: "--grpc",
        timeoutMs: RUN_DEFAULTS.timeoutMs,
        threads: 1,
        durationMs: LOAD_DEFAULTS.durationMs,
        concurrency: LOAD_DEFAULTS.concurrency,
        connections: LOAD_DEFAULTS.connections,
      });
      expect(grpc.endpoint.address).toMatchObject({ kind: "tcp", host: "127.0.0.1", port: 1 });
      expect(grpc).not.toHaveProperty("mix");
      const http = resolveLoadOptions({ address: "http://[::1]:8080/api", protocol: "http" });
      expect(http).toMatchObject({
        flag: "--http",
        collection: RUN_DEFAULTS.collections[0],
        mix: LOAD_DEFAULTS.mix,
        apiKeyIn: { in: "header", name: RUN_DEFAULTS.apiKeyHeader },
      });
      expect([http.endpoint.url?.href, http.endpoint.address]).toEqual([
        "http://[::1]:8080/api",
        expect.objectContaining({ host: "::1", port: 8080 }),
      ]);
      expect(
        resolveLoadOptions({ address: "https://127.0.0.1/x", protocol: "connect" }).endpoint.address,
      ).toMatchObject({
        port: 443,
      });
    },
  );

  it("are checked there, once, for the API's callers as for the CLI's: one usage error naming the flag", () => {
    const refused = (o: Parameters<typeof resolveLoadOptions>[0]) => () => resolveLoadOptions(o);
    expect(refused({ address: "127.0.0.1:1", durationMs: 11 * 60_000 })).toThrow(
      /^--duration must be between 1ms and 10m/,
    );
    expect(refused({ address: "127.0.0.1:1", threads: 5 })).toThrow(
      /^--threads 5: expected a whole number from 1 to the lesser/,
    );
    expect(refused({ address: "http://127.0.0.1:1", protocol: "connect", threads: 2 })).toThrow(
      /only a gRPC run drives from several threads/,
    );
    expect(refused({ address: "127.0.0.1:1", mix: LOAD_DEFAULTS.mix })).toThrow(/^--mix is for --http runs/);
    expect(refused({ address: "not a url", protocol: "grpc-web" })).toThrow(/^--grpc-web not a url: not a valid URL/);
    expect(refused({ address: "example.com:443", allowRemote: false })).toThrow(
      /^--grpc example\.com:443: not this machine; a load run elsewhere needs --allow-remote/,
    );
    expect(refused({ address: "127.0.0.1:1", protocol: "nope" })).toThrow(/no protocol named nope/);
    expect(resolveLoadOptions({ address: "example.com:443" }).endpoint.address).toMatchObject({ host: "example.com" });
    // TLS, metadata and the key where they apply, and only there; an https:// URL speaks TLS on the system roots.
    expect(refused({ address: "http://127.0.0.1:1", protocol: "connect", tls: { caFile: "ca.pem" } })).toThrow(
      /^--connect http:\/\/127\.0\.0\.1:1: TLS \(--tls, --ca, --cert, --key\) needs an https:\/\/ URL/,
    );
    expect(refused({ address: "127.0.0.1:1", metadata: { a: "b" } })).toThrow(
      /^--metadata: load over --grpc speaks plaintext without metadata/,
    );
    expect(refused({ address: "http://127.0.0.1:1", protocol: "http", metadata: { a: "b" } })).toThrow(
      /^--metadata is for --connect and --grpc-web runs/,
    );
    expect(refused({ address: "http://127.0.0.1:1", protocol: "grpc-web", apiKey: "k" })).toThrow(
      /^--api-key is for --http runs/,
    );
    expect(resolveLoadOptions({ address: "https://127.0.0.1:1", protocol: "connect" }).tls).toEqual({});
  });
});

describe("the path rules' verb lexicon", () => {
  const NAMES = ["DEFAULT_VERBS", "DEFAULT_ALLOWED_WORDS"];
  const RULES = "suites/http/_internals/path-rules.ts";

  it("is passed in: the catalogue defines it, the CLI hands it over and shows it, the rules name it nowhere else", () => {
    const users = files.filter((f) => NAMES.some((n) => new RegExp(`\\b${n}\\b`).test(text.get(f) as string)));
    expect(users.sort()).toEqual(["harness/cli/catalogue.ts", "harness/cli/check-options.ts", RULES]);
    // In the rules' file each list is named once, where it is defined: no fallback to it.
    for (const n of NAMES)
      expect([n, (text.get(RULES) as string).match(new RegExp(`\\b${n}\\b`, "g"))?.length]).toEqual([n, 1]);
  });

  it("resolves into the run configuration: --verbs replaces the given verbs, --allow-word adds to the given nouns", () => {
    const http = { baseUrl: "http://127.0.0.1:2", verbs: ["archive"], allowWords: ["publish"] };
    const config = resolveRunConfig(
      { checks: [], http, pathWords: { verbs: ["make"], allowed: ["options"] } },
      () => 1,
    );
    expect(config.http?.words).toEqual({ verbs: ["archive"], allowed: ["options", "publish"] });
    expect(
      resolveRunConfig(
        { checks: [], http: { baseUrl: http.baseUrl }, pathWords: { verbs: ["make"], allowed: [] } },
        () => 1,
      ).http?.words,
    ).toEqual({ verbs: ["make"], allowed: [] });
    expect(resolveRunConfig({ checks: [], http }, () => 1).http).not.toHaveProperty("words");
  });

  it("given to no run, leaves a path rule unjudged with its reason instead of a list of its own", async () => {
    const nouns = catalogue.find((c) => c.id === "http.paths.nouns");
    const ctx = httpContext("http://127.0.0.1:9");
    const { words: _words, ...bare } = ctx.httpConfig ?? ({} as never);
    // Port 9 is never asked: the rule stops before its first request.
    const outcome = await runCheck(nouns as NonNullable<typeof nouns>, { ...ctx, httpConfig: bare }, 5_000);
    expect(outcome).toMatchObject({ status: "error", message: expect.stringContaining("no verb lexicon") });
  });
});
