// The bench's statistics, pure: a 95 % confidence interval for the mean of per-round figures (Student's t over the
// rounds: each round is one measurement, in fresh processes, so the rounds are the independent samples), and the
// status of a target read from that interval rather than from one median. A ratio's rounds are taken on the log scale
// (ratioInterval). bench/run.js imports it from dist/.

/** A 95 % confidence interval for the mean of `n` rounds; `low` and `high` are null with fewer than two rounds. */
export interface Interval {
  mean: number | null;
  low: number | null;
  high: number | null;
  n: number;
  level: 0.95;
}

/** A threshold a figure is held to: at least, at most, or strictly below a bound. */
export type Target = { atLeast: number } | { atMost: number } | { below: number };

/** "met" when the whole interval is on the target's side, "not met" when it is wholly off it, else "not resolved". */
export type Status = "met" | "not met" | "not resolved";

/** The t-distribution's 0.975 quantile for 1 to 30 degrees of freedom (any statistics table). */
const T975 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11,
  2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];

/**
 * The 0.975 quantile of Student's t with `df` degrees of freedom: from the table up to 30, then the Cornish-Fisher
 * expansion about the normal's 1.96 (within 0.001 of the exact value from 30 up).
 */
export function tQuantile975(df: number): number {
  if (df < 1) return Infinity;
  if (df <= T975.length) return T975[Math.floor(df) - 1]!;
  const z = 1.959963985;
  return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2);
}

/** The mean of the rounds and its 95 % interval: mean ± t(n-1) × s / √n. */
export function meanInterval(rounds: readonly number[]): Interval {
  const n = rounds.length;
  if (n === 0) return { mean: null, low: null, high: null, n, level: 0.95 };
  const mean = rounds.reduce((a, b) => a + b, 0) / n;
  if (n === 1) return { mean, low: null, high: null, n, level: 0.95 };
  const variance = rounds.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1);
  const half = tQuantile975(n - 1) * Math.sqrt(variance / n);
  return { mean, low: mean - half, high: mean + half, n, level: 0.95 };
}

/** Whether the interval meets the target, misses it, or straddles it (and so does not resolve it). */
export function targetStatus(interval: Interval, target: Target): Status {
  const { low, high } = interval;
  if (low === null || high === null) return "not resolved";
  if ("atLeast" in target) return low >= target.atLeast ? "met" : high < target.atLeast ? "not met" : "not resolved";
  if ("atMost" in target) return high <= target.atMost ? "met" : low > target.atMost ? "not met" : "not resolved";
  return high < target.below ? "met" : low >= target.below ? "not met" : "not resolved";
}

/**
 * The interval of a ratio's rounds on the log scale: the geometric mean, exp(mean of logs ± t × s / √n). A ratio and
 * its inverse get each other's inverse bounds, and no bound reaches zero however noisy the rounds.
 */
export function ratioInterval(rounds: readonly number[]): Interval {
  const logs = meanInterval(rounds.map(Math.log));
  const exp = (x: number | null) => (x === null ? null : Math.exp(x));
  return { ...logs, mean: exp(logs.mean), low: exp(logs.low), high: exp(logs.high) };
}
