// What the options of `check` ask the runner for: the gRPC and HTTP targets and the selection, as RunOptions.
import { dirname } from "node:path";
import type { GrpcTargetOptions, HttpRunTarget, RunOptions } from "../run-config.js";
import { parseApiKeyPlacement, type ApiKeyPlacement } from "../targets/http-target.js";
import type { CheckCliOptions } from "./check-options.js";
import { parseMetadata } from "./metadata.js";
import type { Protocol } from "../protocols/index.js";
import { rpcTargetsOf } from "./rpc-target.js";
import { GRPC } from "../protocols/grpc/index.js";

/** The HTTP target as the flags describe it. */
export function toHttpTarget(
  opts: CheckCliOptions,
  baseUrl: string,
  apiKey: string | undefined = opts.apiKey,
): HttpRunTarget {
  return {
    baseUrl,
    collections: opts.collection,
    ...(opts.openapi !== undefined && { openapi: opts.openapi }),
    ...(apiKey !== undefined && { apiKey }),
    ...(opts.apiKeyHeader !== undefined && { apiKeyHeader: opts.apiKeyHeader }),
    ...(opts.apiKeyIn !== undefined && { apiKeyIn: parseApiKeyPlacement(opts.apiKeyIn) as ApiKeyPlacement }),
    ...(opts.httpReplica.length > 0 && { replicas: opts.httpReplica }),
    ...(opts.filter.length > 0 && { filters: opts.filter }),
    ...(opts.verbs.length > 0 && { verbs: opts.verbs }),
    ...(opts.allowWord.length > 0 && { allowWords: opts.allowWord }),
    timeoutMs: opts.timeout,
    ...(opts.maxRpcs !== undefined && { maxCalls: opts.maxRpcs }),
    ...(opts.rate !== undefined && { rate: opts.rate }),
    ...(baseUrl.startsWith("https://") &&
      (opts.ca !== undefined || opts.cert !== undefined) && {
        tls: {
          ...(opts.ca !== undefined && { caFile: opts.ca }),
          ...(opts.cert !== undefined && { certFile: opts.cert }),
          ...(opts.key !== undefined && { keyFile: opts.key }),
        },
      }),
  };
}

/**
 * The folder trace files are named relative to: the JSON report's, else the HTML report's, else the working directory.
 */
function reportFolder(opts: CheckCliOptions): string {
  const file = (name: string) => opts.reporter.find((r) => r.name === name && r.path !== undefined)?.path;
  const report = opts.reportJson ?? file("json") ?? opts.reportHtml ?? file("html");
  return report !== undefined ? dirname(report) : ".";
}

/**
 * The run's RPC targets as RunOptions: the first (gRPC when given) and the others, with the same options each; the
 * built-in reference adds its Connect and gRPC-Web URL (`peers`).
 */
export function toRunOptions(
  opts: CheckCliOptions,
  grpcAddress: string | undefined,
  http?: HttpRunTarget,
  metadata: Record<string, string> = parseMetadata(opts.metadata),
  peers: readonly { protocol: Protocol | (string & {}); address: string }[] = rpcTargetsOf(opts).slice(1),
): Omit<RunOptions, "checks"> {
  // gRPC is the default protocol, left unsaid so that the report reads as before.
  const named = rpcTargetsOf(opts)[0]?.protocol;
  const grpc =
    grpcAddress !== undefined ? rpcTarget(opts, grpcAddress, named === GRPC ? undefined : named, metadata) : undefined;
  const rpcPeers = grpc ? peers.map((p) => rpcTarget(opts, p.address, p.protocol, metadata)) : [];
  return {
    ...(opts.contract !== undefined && { contract: opts.contract }),
    ...(grpc && { grpc }),
    ...(rpcPeers.length > 0 && { rpcPeers }),
    replicas: opts.replica,
    ...(opts.replicaMode !== undefined && { replicaMode: opts.replicaMode }),
    ...(http && { http }),
    only: opts.only,
    skip: opts.skip,
    ...(opts.seed !== undefined && { seed: opts.seed }),
    runs: opts.runs,
    concurrency: opts.concurrency,
    ...(opts.path !== undefined && { path: opts.path }),
    ...(opts.strict !== undefined && { strict: opts.strict }),
    profiles: opts.profile === "protocol" ? ["contract", "protocol"] : ["contract"],
    ...(opts.expectFailures !== undefined && { expectFailures: opts.expectFailures }),
    ...(opts.trace !== undefined && { trace: { dir: opts.trace, linkFrom: reportFolder(opts) } }),
  };
}

/** One RPC target with the run's TLS, authority, metadata, timeout and budget options. */
function rpcTarget(
  opts: CheckCliOptions,
  address: string,
  protocol: Protocol | (string & {}) | undefined,
  metadata: Record<string, string>,
): GrpcTargetOptions {
  return {
    address,
    ...(protocol && { protocol }),
    // An https:// URL (--connect, --grpc-web) speaks TLS by itself and takes the run's files without --tls.
    ...((opts.tls || (address.startsWith("https://") && (opts.ca !== undefined || opts.cert !== undefined))) && {
      tls: {
        ...(opts.ca !== undefined && { caFile: opts.ca }),
        ...(opts.cert !== undefined && { certFile: opts.cert }),
        ...(opts.key !== undefined && { keyFile: opts.key }),
      },
    }),
    ...(opts.authority !== undefined && { authority: opts.authority }),
    metadata,
    timeoutMs: opts.timeout,
    ...(opts.maxRpcs !== undefined && { maxCalls: opts.maxRpcs }),
    ...(opts.rate !== undefined && { rate: opts.rate }),
  };
}
