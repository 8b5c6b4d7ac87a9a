// `serve --workers N`: N processes of the reference server sharing its two ports (node:cluster hands each new
// connection to one of them), so a machine's cores are used. The primary serves nothing itself: it starts the
// workers, prints the addresses once all listen, replaces a worker that dies, and on SIGTERM (SIGINT, SIGHUP, or the
// end of the npx that started it) stops them all.
import cluster, { type Worker } from "node:cluster";
import type { CliIo } from "./io.js";
import { onWrapperGone, type Wrapper } from "./wrapper-watch.js";

/** What a worker sends the primary once it listens. */
export interface WorkerListening {
  grpcAddress: string;
  httpUrl: string;
}

/** A worker that dies sooner than this after starting is not replaced: it would only die again. */
const CRASH_LOOP_MS = 5000;

export function isWorkerListening(m: unknown): m is WorkerListening {
  return (
    typeof m === "object" &&
    m !== null &&
    typeof (m as WorkerListening).grpcAddress === "string" &&
    typeof (m as WorkerListening).httpUrl === "string"
  );
}

/** Runs the primary until every worker has stopped; resolves with the exit code. */
export function runWorkers(
  count: number,
  io: CliIo,
  graceMs: number,
  wrappers: readonly Wrapper[] = [],
): Promise<number> {
  return new Promise((resolve) => {
    const live = new Set<Worker>();
    const listening = new Set<Worker>();
    let printed = false;
    let stopping = false;
    let exitCode = 0;
    let backstop: NodeJS.Timeout | undefined;

    const finish = () => {
      if (live.size > 0) return;
      clearTimeout(backstop);
      for (const s of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.off(s, onSignal);
      unwatch();
      resolve(exitCode);
    };
    const stopAll = () => {
      stopping = true;
      for (const w of live) w.process.kill("SIGTERM");
      // Each worker bounds its own shutdown by the grace; one that outlives it by far is killed.
      backstop ??= setTimeout(() => {
        for (const w of live) w.process.kill("SIGKILL");
      }, graceMs + 5000);
      finish();
    };
    const onSignal = (signal: string) => {
      if (stopping) return;
      io.stderr(`example-conformance: ${signal}: stopping ${live.size} workers\n`);
      stopAll();
    };
    for (const s of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(s, onSignal);
    const unwatch = onWrapperGone(wrappers, () => onSignal("the npm (npx) that started serve ended"));

    const fork = () => {
      const started = Date.now();
      const worker = cluster.fork();
      live.add(worker);
      worker.on("message", (m: unknown) => {
        if (!isWorkerListening(m)) return;
        listening.add(worker);
        if (!printed && listening.size === count) {
          printed = true;
          io.stdout(`grpc ${m.grpcAddress}\nhttp ${m.httpUrl}\n`);
        }
      });
      worker.on("exit", (code, signal) => {
        live.delete(worker);
        listening.delete(worker);
        const how = signal ?? `exit ${code}`;
        if (stopping) {
          if (code !== 0) exitCode = 1;
          return finish();
        }
        if (!printed || Date.now() - started < CRASH_LOOP_MS) {
          io.stderr(
            `example-conformance: serve: a worker ended (${how}) ` +
              `${printed ? "soon after it started" : "before it listened"}; stopping\n`,
          );
          exitCode = typeof code === "number" && code > 0 ? code : 1;
          return stopAll();
        }
        io.stderr(`example-conformance: serve: a worker ended (${how}); starting another\n`);
        fork();
      });
    };
    for (let i = 0; i < count; i++) fork();
  });
}
