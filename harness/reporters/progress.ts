// The progress reporter: what a run is doing while it goes, on stderr, so a slow target is not mistaken for a hung
// harness. On a terminal one line redrawn in place (checks done of total, the ones running, elapsed); in a log (CI,
// a pipe) a line every interval while the run goes, so no log sits silent longer than that. Never on stdout.
import type { Reporter } from "../report.js";

/** Off a terminal, the longest a run goes without a line on stderr: 10 s, as vitest and k6 keep a CI log alive. */
export const PROGRESS_INTERVAL_MS = 10_000;
/** On a terminal, how often the elapsed time is redrawn between starts and ends. */
const REDRAW_MS = 1000;
/** Running checks named on the line; the rest are counted. */
const RUNNING_NAMED = 3;

export interface ProgressReporterOptions {
  write(text: string): void;
  /** Whether stderr is a terminal: the line is redrawn in place there, printed once an interval elsewhere. */
  live: boolean;
  /** Off a terminal, a line at least this often while the run goes; default PROGRESS_INTERVAL_MS. */
  intervalMs?: number;
  /** Milliseconds, for the elapsed times; default performance.now. */
  now?: () => number;
}

export interface ProgressReporter extends Reporter {
  /** Stops its timer and clears its line: for a run that ended without onRunEnd (a usage error thrown mid-run). */
  stop(): void;
}

const seconds = (ms: number) => `${Math.floor(ms / 1000)} s`;

export function createProgressReporter(options: ProgressReporterOptions): ProgressReporter {
  const now = options.now ?? (() => performance.now());
  const interval = options.intervalMs ?? PROGRESS_INTERVAL_MS;
  const running = new Map<string, number>();
  let total = 0;
  let done = 0;
  let t0 = 0;
  let timer: NodeJS.Timeout | undefined;
  let drawn = false;

  const line = () => {
    const at = now();
    // Longest running first: the one a reader waits on.
    const shown = [...running].sort((a, b) => a[1] - b[1]);
    const names = shown.slice(0, RUNNING_NAMED).map(([id, since]) => `${id} ${seconds(at - since)}`);
    const more = shown.length > RUNNING_NAMED ? `, and ${shown.length - RUNNING_NAMED} more` : "";
    const what = shown.length > 0 ? `; running: ${names.join(", ")}${more}` : "";
    return `progress: ${done} of ${total} checks done${what}; ${seconds(at - t0)} elapsed`;
  };
  const draw = () => {
    options.write(`\r${line()}\x1b[K`);
    drawn = true;
  };
  const stop = () => {
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
    if (drawn) options.write("\r\x1b[K");
    drawn = false;
  };
  return {
    onRunStart(info) {
      total = info.total;
      t0 = now();
      // Unref'd: a run's end never waits on its progress line.
      timer = options.live
        ? setInterval(draw, REDRAW_MS)
        : setInterval(() => options.write(`example-conformance: ${line()}\n`), interval);
      timer.unref();
    },
    onCheckStart(check) {
      running.set(check.id, now());
      if (options.live) draw();
    },
    onCheckEnd(check) {
      running.delete(check.id);
      done++;
      if (options.live) draw();
    },
    // The console writes the results next, on the same terminal: the line is cleared first.
    onRunEnd: stop,
    stop,
  };
}
