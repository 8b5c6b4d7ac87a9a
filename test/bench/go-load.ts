// The benchmark's neutral load generator (bench/go-load, a grpc-go client) and its yardstick server
// (bench/plain-grpc-js- server.js), started from the benchmark and from the test that proves the generator measures a
// real server.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { PACKAGE_ROOT } from "../../contract/paths.js";
import { startListeningProcess, type ListeningProcess } from "../../fixtures/_internals/start-process.js";
import { buildGo, missingGo } from "../../fixtures/implementations/index.js";

const run = promisify(execFile);
export const GO_LOAD_SOURCE = join(PACKAGE_ROOT, "bench", "go-load", "main.go");
export const PLAIN_GRPC_JS_SERVER = join(PACKAGE_ROOT, "bench", "plain-grpc-js-server.js");

export interface GoLoadReport {
  target: string;
  concurrency: number;
  connections: number;
  durationMs: number;
  requests: number;
  requestsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  /** Calls that did not end OK, by grpc-go's name of their status. */
  errors: Record<string, number>;
  gomaxprocs: number;
}

export interface GoLoadOptions {
  concurrency: number;
  connections: number;
  /** Go durations: "5s", "500ms". */
  duration: string;
  warmup?: string;
  body?: string;
}

/** Undefined when the generator can be built here; else what to install. It builds like the grpc-go implementation. */
export const missingGoLoad = missingGo;

/** Builds the generator (cached by its source) and runs it once against a loopback address. */
export async function runGoLoad(target: string, options: GoLoadOptions): Promise<GoLoadReport> {
  const binary = await buildGo(GO_LOAD_SOURCE);
  const args = [
    "-target",
    target,
    "-concurrency",
    String(options.concurrency),
    "-connections",
    String(options.connections),
    "-duration",
    options.duration,
  ];
  if (options.warmup !== undefined) args.push("-warmup", options.warmup);
  if (options.body !== undefined) args.push("-body", options.body);
  const { stdout } = await run(binary, args, { timeout: 15 * 60_000, maxBuffer: 1 << 20 });
  return JSON.parse(stdout) as GoLoadReport;
}

/** The plain grpc-js server of the same contract, in its own process. */
export async function startPlainGrpcJs(): Promise<ListeningProcess & { address: string }> {
  const started = await startListeningProcess("plain grpc-js", process.execPath, [PLAIN_GRPC_JS_SERVER, "0"]);
  return { ...started, address: started.addresses[0] as string };
}
