// The built-in reference server that `check` with no target checks, on a worker thread: its modules load and it
// starts on the other core while this thread goes on, and during the run it answers on a thread of its own, so that
// the checks and the server it checks do not take turns on one event loop. The server is the same code, started
// with the same options, as in-process (reference-server/start.ts); only where it runs differs.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { ConformanceError } from "../errors.js";

export interface BuiltInServer {
  grpcAddress: string;
  httpUrl: string;
  close(): Promise<void>;
}

/** How long a close may take before the worker is ended outright: calls still open are the run's, and it is over. */
const CLOSE_BOUND_MS = 5_000;

type FromWorker = { ready: { grpcAddress: string; httpUrl: string } } | { failed: string } | { closed: true };

/** The compiled worker beside this module; absent when the harness runs from its TypeScript source (tests). */
const WORKER = new URL("./built-in-server-worker.js", import.meta.url);

/** Starts the built-in reference server with `apiKey`, on a worker thread where there is a compiled one, else here. */
export async function startBuiltInServer(apiKey: string): Promise<BuiltInServer> {
  if (WORKER.protocol !== "file:" || !existsSync(fileURLToPath(WORKER))) {
    const { startReferenceServer } = await import("../../reference-server/start.js");
    return startReferenceServer({ grpcPort: 0, httpPort: 0, log: "silent", apiKey });
  }
  // No flags of this process: some (--input-type, --eval's) are refused by a worker, and the server needs none.
  const worker = new Worker(WORKER, { workerData: { apiKey }, execArgv: [] });
  let ready = false;
  // After the start, a fault of the server is the harness's, as it was when the server ran on this thread: exit 70.
  worker.on("error", (err) => {
    if (ready) setImmediate(() => { throw err; });
  });
  const started = await new Promise<{ grpcAddress: string; httpUrl: string }>((resolve, reject) => {
    worker.once("message", (m: FromWorker) => ("ready" in m ? resolve(m.ready) : reject(new ConformanceError("internal", `the built-in reference server did not start: ${"failed" in m ? m.failed : "no address"}`))));
    worker.once("error", (err) => reject(new ConformanceError("internal", `the built-in reference server did not start: ${err.message}`)));
    worker.once("exit", (code) => reject(new ConformanceError("internal", `the built-in reference server's thread ended (code ${code}) before it started`)));
  });
  ready = true;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= new Promise<void>((resolve) => {
      const bound = setTimeout(() => void worker.terminate().then(() => resolve()), CLOSE_BOUND_MS);
      worker.once("exit", () => (clearTimeout(bound), resolve()));
      worker.postMessage("close");
    }));
  return { ...started, close };
}
