// Opens what checks need for one run: the targets behind one budget, and the context each check receives.
import { resolve } from "node:path";
import type { CheckContext, CheckDefinition, CheckOutcome } from "./check.js";
import { ConformanceError } from "./errors.js";
import { CONTRACT_DIR } from "./_internals/paths.js";
import type { GrpcTarget } from "./targets/grpc-target.js";
import { createGrpcTarget, DEFAULT_TIMEOUT_MS, probeReachable, type GrpcTargetOptions } from "./targets/create-grpc-target.js";

export interface SessionOptions {
  contract?: string;
  grpc?: GrpcTargetOptions;
  replicas?: readonly string[];
  seed: number;
  runs: number;
  path?: string;
}

export interface Session {
  context(): CheckContext;
  close(): Promise<void>;
}

/** Probes every target first (exit 3 with the address and the cause when one does not answer), then opens them. */
export async function openSession(options: SessionOptions, needsGrpc = true): Promise<Session> {
  const contractDir = resolve(options.contract ?? CONTRACT_DIR);
  let grpc: ReturnType<typeof createGrpcTarget> | undefined;
  const replicas: GrpcTarget[] = [];
  if (options.grpc && needsGrpc) {
    await probeReachable(options.grpc);
    for (const r of options.replicas ?? []) await probeReachable({ ...options.grpc, address: r }, "--replica");
    grpc = createGrpcTarget(options.grpc);
    for (const r of options.replicas ?? []) replicas.push(createGrpcTarget({ ...options.grpc, address: r, budget: grpc.budget }));
  }
  const memo = new Map<string, Promise<unknown>>();
  return {
    context: () => ({
      contractDir,
      ...(grpc && { grpc }),
      replicas,
      seed: options.seed,
      runs: options.runs,
      timeoutMs: options.grpc?.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      memo,
      ...(options.path !== undefined && { path: options.path }),
      signal: new AbortController().signal,
    }),
    async close() {
      await grpc?.close();
      for (const r of replicas) await r.close();
    },
  };
}

/** Runs one check with a bound on its time; what it throws becomes an error outcome, never a pass. */
export async function runCheck(check: CheckDefinition, ctx: CheckContext, timeoutMs: number): Promise<CheckOutcome> {
  if (check.area === "grpc" && !ctx.grpc) return { status: "skip", message: "no gRPC target (--grpc HOST:PORT)" };
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<CheckOutcome>((resolvePromise) => {
    timer = setTimeout(() => {
      controller.abort();
      resolvePromise({ status: "error", message: `did not finish within ${timeoutMs} ms` });
    }, timeoutMs);
  });
  try {
    return await Promise.race([check.run({ ...ctx, signal: controller.signal }), timeout]);
  } catch (reason) {
    return { status: "error", message: ConformanceError.from(reason).message };
  } finally {
    clearTimeout(timer);
  }
}
