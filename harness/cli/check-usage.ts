// The usage rules of `check` that no single option can enforce alone, found before any server starts or any target
// is touched; each broken rule is one line naming the flags.
import { ConformanceError } from "../errors.js";
import { protocolModule, protocolModules } from "../protocols/index.js";
import { parseAddress } from "../targets/address.js";
import { parseHttpBaseUrl } from "../targets/http-base-url.js";
import { HTTP_TOKEN, parseApiKeyPlacement } from "../targets/http-target.js";
import { hasCredentials, withoutCredentials } from "../_internals/url-credentials.js";
import type { CheckCliOptions } from "./check-options.js";
import { collectMetadata } from "./metadata.js";
import { rpcTargetsOf } from "./rpc-target.js";

/** Usage errors among the options, found before any server starts or any target is touched. */
export function checkUsage(opts: CheckCliOptions, env: Readonly<Record<string, string | undefined>> = {}): void {
  // In this order: the first broken rule is the one said.
  checkRunUsage(opts);
  checkTargetUsage(opts, env);
  checkHttpOnlyUsage(opts);
  checkImageUsage(opts);
  checkHttpDetailUsage(opts);
}

/** TLS material, output and attestation flags that need another. */
function checkRunUsage(opts: CheckCliOptions): void {
  // An https:// URL speaks TLS by itself; --tls is for a gRPC address, which has no scheme to say so.
  const httpsUrl = [opts.http, ...rpcTargetsOf(opts).map((t) => t.address)].some(
    (u) => u?.startsWith("https://") === true,
  );
  if ((opts.ca || opts.cert || opts.key) && !opts.tls && !httpsUrl) {
    throw new ConformanceError("usage", "--ca, --cert and --key need --tls or an https:// URL");
  }
  if (opts.verbose && opts.quiet) throw new ConformanceError("usage", "--verbose and --quiet: one or the other");
  if ((opts.attestation === undefined) !== (opts.signKey === undefined))
    throw new ConformanceError(
      "usage",
      "--attestation and --sign-key go together: the attestation is signed with the key",
    );
}

/** The RPC targets, their replicas and metadata, and credentials in the HTTP URL. */
function checkTargetUsage(opts: CheckCliOptions, env: Readonly<Record<string, string | undefined>>): void {
  if (opts.replica.length > 0 && opts.grpc === undefined) throw new ConformanceError("usage", "--replica needs --grpc");
  for (const t of rpcTargetsOf(opts)) protocolModule(t.protocol)?.endpoint(t.address, t.flag);
  for (const r of opts.replica) parseAddress(r, "--replica");
  collectMetadata(opts, env);
  if (opts.http !== undefined && hasCredentials(opts.http)) {
    throw new ConformanceError(
      "usage",
      `--http ${withoutCredentials(opts.http)}: credentials in the URL are not supported (give the key with ` +
        `--api-key or EXAMPLE_API_KEY)`,
    );
  }
}

/** Flags that only an HTTP target uses. */
function checkHttpOnlyUsage(opts: CheckCliOptions): void {
  const httpOnly = [
    ["--collection", opts.collection.length > 0],
    ["--openapi", opts.openapi !== undefined],
    ["--api-key", opts.apiKey !== undefined],
    ["--api-key-header", opts.apiKeyHeader !== undefined],
    ["--api-key-in", opts.apiKeyIn !== undefined],
    ["--http-replica", opts.httpReplica.length > 0],
    ["--filter", opts.filter.length > 0],
    ["--verbs", opts.verbs.length > 0],
    ["--allow-word", opts.allowWord.length > 0],
  ] as const;
  for (const [flag, given] of httpOnly) {
    // Without --http the built-in reference server is checked; it needs none of these.
    if (given && opts.http === undefined && opts.httpPort === undefined)
      throw new ConformanceError("usage", `${flag} needs --http (or --image with --http-port)`);
  }
  if (opts.http !== undefined) parseHttpBaseUrl(opts.http);
}

/** --image starts its own target; its flags need it. */
function checkImageUsage(opts: CheckCliOptions): void {
  if (opts.image !== undefined) {
    if (rpcTargetsOf(opts).length > 0 || opts.http !== undefined) {
      throw new ConformanceError(
        "usage",
        `--image starts its own target: leave out ${protocolModules()
          .map((m) => m.cli.flag)
          .join(", ")} and --http`,
      );
    }
    if (opts.replica.length > 0) throw new ConformanceError("usage", "--replica needs --grpc, not --image");
    parseEnv(opts.env);
    if (opts.waitLog !== undefined) waitLogPattern(opts.waitLog);
  } else {
    for (const [flag, given] of [
      ["--env", opts.env.length > 0],
      ["--wait-log", opts.waitLog !== undefined],
      ["--grpc-port", opts.grpcPort !== undefined],
      ["--http-port", opts.httpPort !== undefined],
    ] as const) {
      if (given) throw new ConformanceError("usage", `${flag} needs --image`);
    }
  }
}

/** The collections, the API key and its placement, the HTTP replicas. */
function checkHttpDetailUsage(opts: CheckCliOptions): void {
  for (const c of opts.collection) {
    if (!/^\/[^\s?#]*$/.test(c) || c.startsWith("//")) {
      throw new ConformanceError("usage", `--collection ${c}: expected a path on the base URL, such as /messages`);
    }
  }
  if (opts.apiKey === "") throw new ConformanceError("usage", "--api-key: the key is empty");
  if (opts.apiKeyIn !== undefined) {
    if (parseApiKeyPlacement(opts.apiKeyIn) === undefined)
      throw new ConformanceError("usage", `--api-key-in ${opts.apiKeyIn}: expected header:NAME, bearer or query:NAME`);
    if (opts.apiKeyHeader !== undefined)
      throw new ConformanceError("usage", "--api-key-in and --api-key-header both say where the key goes: give one");
  }
  for (const r of opts.httpReplica) parseHttpBaseUrl(r, "--http-replica");
  if (opts.apiKeyHeader !== undefined && !HTTP_TOKEN.test(opts.apiKeyHeader)) {
    throw new ConformanceError("usage", `--api-key-header ${opts.apiKeyHeader}: not a valid HTTP header name`);
  }
}

/** --env K=V pairs for the container. */
export function parseEnv(pairs: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq <= 0 || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(pair.slice(0, eq)))
      throw new ConformanceError("usage", `--env ${pair}: expected NAME=value`);
    out[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return out;
}

export function waitLogPattern(source: string): RegExp {
  try {
    return new RegExp(source);
  } catch (err) {
    throw new ConformanceError(
      "usage",
      `--wait-log ${source}: not a regular expression (${err instanceof Error ? err.message : String(err)})`,
    );
  }
}
