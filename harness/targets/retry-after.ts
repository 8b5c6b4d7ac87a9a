// Backpressure an HTTP target asks for: 429 (RFC 6585), or 503 with Retry-After on a request safe to send again (RFC
// 9110 §9.2.2, §10.2.3). Waited out and sent again within the bounds of backpressure.ts, counted, and never a check's
// verdict: how fast the run may go is the deployment's choice (a rate limit, a proxy), not a conformance question.

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
 * to wait out, or a 503 on a request that may have done something. A wait past the bound is returned as asked: the
 * caller (backpressure.ts) counts it a refusal past the bound.
 */
export function backpressureWaitMs(method: string, status: number, retryAfter: string | undefined): number | undefined {
  const asked = retryAfterMs(retryAfter);
  if (status === 503 && (asked === undefined || !IDEMPOTENT.has(method.toUpperCase()))) return undefined;
  if (status !== 429 && status !== 503) return undefined;
  return asked ?? DEFAULT_WAIT_MS;
}
