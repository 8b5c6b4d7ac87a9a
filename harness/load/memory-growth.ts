// How much a load run's memory grew, read so that a plateau reads flat and a creep does not. The load process's
// resident set rises for a minute or so whatever it holds: V8 doubles its young generation once (16 → 32 MiB
// reserved) and lets garbage promoted to the old generation pile up until its first mark-compact, about 60 s into
// a run of 64 HTTP/1.1 connections (9.7 → 23.3 MiB of old space, 8.5 MiB of it live). Then it saw-tooths below
// that first peak (docs/load.md, "Memory"). So the growth is the highest sample of the run's second half less the
// highest of its first: a plateau reaches no higher than it had (0 or less), a structure that grows with the calls
// reaches higher by what it gained in the second half.

/** A run's memory samples, in MiB: resident set (every thread) and the main thread's heap in use. */
export interface MemorySamples {
  rssMiB: readonly number[];
  heapUsedMiB: readonly number[];
}

/** MiB, to a tenth: the second half's highest sample less the first half's (0 with fewer than two samples). */
export interface MemoryGrowth {
  rss: number;
  heapUsed: number;
}

const highest = (xs: readonly number[]): number => xs.reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY);

/** The second half's highest less the first half's, of one series; an odd count's middle sample is the second's. */
function halvesGrowth(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const half = Math.floor(xs.length / 2);
  return Math.round((highest(xs.slice(half)) - highest(xs.slice(0, half))) * 10) / 10;
}

/** How much a run's memory grew from its first half to its second (see the file's head). */
export function memoryGrowth(samples: MemorySamples): MemoryGrowth {
  return { rss: halvesGrowth(samples.rssMiB), heapUsed: halvesGrowth(samples.heapUsedMiB) };
}
