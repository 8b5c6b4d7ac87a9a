// Backpressure a target asks for: 429 (RFC 6585), or 503 with Retry-After on a request safe to send again (RFC 9110
// §9.2.2, §10.2.3). Waited out and sent again within bounds, counted, and never a check's verdict: how fast the run may
// go is the deployment's choice (a rate limit, a proxy), not a conformance question.

/** Waits one request may make before its check sees the refusal. */
export const MAX_WAITS_PER_REQUEST = 5;
/** The longest single wait taken; a target that asks for more gets its refusal judged by the check. */
export const MAX_WAIT_MS = 10_000;
/** The wait when a 429 names none. */
const DEFAULT_WAIT_MS = 1000;
const IDEMPOTENT = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"]);

/** Retry-After as milliseconds from `now`: delta-seconds or an HTTP-date; undefined when it is neither. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d{1,9}$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * How long to wait before sending `method` again after `status`, or undefined when the answer stands: not a refusal
 * to wait out, a 503 on a request that may have done something, or a wait past MAX_WAIT_MS.
 */
export function backpressureWaitMs(method: string, status: number, retryAfter: string | undefined): number | undefined {
  const asked = retryAfterMs(retryAfter);
  if (status === 503 && (asked === undefined || !IDEMPOTENT.has(method.toUpperCase()))) return undefined;
  if (status !== 429 && status !== 503) return undefined;
  const wait = asked ?? DEFAULT_WAIT_MS;
  return wait <= MAX_WAIT_MS ? wait : undefined;
}

/** The waits a run made, for the report. */
export interface Backpressure {
  waits: number;
  waitedMs: number;
}
