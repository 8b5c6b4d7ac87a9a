// The worker thread of the built-in reference server (built-in-server.ts): starts it, says where it listens, closes
// it when asked, then ends.
import { parentPort, workerData } from "node:worker_threads";
import { startReferenceServer } from "../../reference-server/start.js";

const port = parentPort;
if (port) {
  const { apiKey } = workerData as { apiKey: string };
  try {
    const server = await startReferenceServer({ grpcPort: 0, httpPort: 0, log: "silent", apiKey });
    port.once("message", () => {
      void server.close().finally(() => port.close());
    });
    port.postMessage({ ready: { grpcAddress: server.grpcAddress, httpUrl: server.httpUrl } });
  } catch (err) {
    port.postMessage({ failed: err instanceof Error ? err.message : String(err) });
    port.close();
  }
}
