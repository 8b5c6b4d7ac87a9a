// The figures the attack and soak tests measure, kept for docs/reliability.md: a test records what it saw only when
// RELIABILITY_RESULTS=1 (`npm run soak` sets it), so `npm test` never rewrites the file. Test files run in parallel
// workers: each write takes the file's lock, reads it, sets its own entry and writes it back whole.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import lockfile from "proper-lockfile";
import { PACKAGE_ROOT } from "../../contract/paths.js";

export const RELIABILITY_RESULTS = join(PACKAGE_ROOT, "test", "reference-server", "reliability-results.json");

/** One measured attack: where and when it ran, and its figures, each named with its unit (`rssMaxMiB`, `closedMs`). */
export interface Measured {
  file: string;
  date: string;
  node: string;
  machine: string;
  loadAverage: number;
  figures: Record<string, number>;
}

export interface ReliabilityResults {
  measured: Record<string, Measured>;
}

/** Holds the lock on the results file, waiting (bounded) while another test file writes it. */
function lock(): () => void {
  if (!existsSync(RELIABILITY_RESULTS))
    writeFileSync(RELIABILITY_RESULTS, `${JSON.stringify({ measured: {} }, null, 2)}\n`);
  for (let attempt = 0; ; attempt++) {
    try {
      return lockfile.lockSync(RELIABILITY_RESULTS, { realpath: false });
    } catch (err) {
      if (attempt >= 200) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 25);
    }
  }
}

/** Records `figures` under `key` when RELIABILITY_RESULTS=1; otherwise does nothing. */
export function recordReliability(key: string, file: string, figures: Record<string, number>): void {
  if (process.env.RELIABILITY_RESULTS !== "1") return;
  const release = lock();
  try {
    const results = JSON.parse(readFileSync(RELIABILITY_RESULTS, "utf8")) as ReliabilityResults;
    const cpus = os.cpus();
    const machine = `${cpus[0]?.model.trim() ?? "unknown CPU"}, ${cpus.length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB`;
    results.measured[key] = {
      file,
      date: new Date().toISOString(),
      node: process.version,
      machine,
      loadAverage: Math.round(os.loadavg()[0]! * 100) / 100,
      figures,
    };
    const sorted = Object.fromEntries(Object.entries(results.measured).sort(([a], [b]) => a.localeCompare(b)));
    writeFileSync(RELIABILITY_RESULTS, `${JSON.stringify({ measured: sorted }, null, 2)}\n`);
  } finally {
    release();
  }
}
