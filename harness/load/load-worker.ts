// A worker thread of a --threads load run: drives its share of the calls and posts back its counts and histogram.
import { parentPort, workerData } from "node:worker_threads";
import { encodeIntoCompressedBase64 } from "hdr-histogram-js";
import { drive, type DriveSpec } from "./_internals/drive.js";

export interface WorkerInput {
  spec: DriveSpec;
  /** Two counters per worker, calls and failures, read by the main thread for the progress line. */
  progress: SharedArrayBuffer;
  index: number;
}

const input = workerData as WorkerInput;
let stop = false;
parentPort?.on("message", (m) => {
  if (m === "stop") stop = true;
});
const { histogram, corrected, ...counts } = await drive(
  input.spec,
  () => stop,
  new Int32Array(input.progress, input.index * 8, 2),
);
parentPort?.postMessage({
  ...counts,
  histogram: encodeIntoCompressedBase64(histogram),
  ...(corrected && { corrected: encodeIntoCompressedBase64(corrected) }),
});
parentPort?.close();
