// The heap in use after full collections, for tests that show a server keeps nothing between rounds.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

export function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

export const mib = (n: number): string => `${(n / 1024 / 1024).toFixed(1)} MiB`;
