// The run's one backpressure policy, shared by the HTTP target and the RPC targets: a refusal that asks the run to
// wait (HTTP's 429, or 503 with Retry-After, read in retry-after.ts; gRPC's RESOURCE_EXHAUSTED with a
// grpc-retry-pushback-ms, read here) is waited out and sent again, at most MAX_WAITS_PER_REQUEST times and
// never for longer than MAX_WAIT_MS at once. Each wait is counted for the report. A request still refused past that
// bound is noted, and the run ends "cannot check: ... keeps refusing" (exit 4), never a verdict on the server.
import { Status } from "../protocols/rpc.js";

/** Waits one request may make before the target counts as refusing it. */
export const MAX_WAITS_PER_REQUEST = 5;
/** The longest single wait taken; a target that asks for more refuses the run past its bound. */
export const MAX_WAIT_MS = 10_000;

/** What a refusal that asks for a wait says: how long, and the answer in a word ("429", "RESOURCE_EXHAUSTED"). */
export interface AskedWait {
  ms: number;
  answer: string;
}

/** The waits a run made, for the report. */
export interface Backpressure {
  waits: number;
  waitedMs: number;
}

/** A target that kept refusing one request past the bound: the answers and the waits they asked for. */
export interface Refusing {
  /** The target's address as the user gave it. */
  target: string;
  /** The requests it refused past the bound. */
  requests: number;
  /** The first such request's refusals, in order. */
  asked: AskedWait[];
}

/** The run's record of backpressure: every target of the run notes its waits and its refusals here. */
export class BackpressureLog {
  private readonly taken: Backpressure = { waits: 0, waitedMs: 0 };
  private readonly refused = new Map<string, Refusing>();

  waited(ms: number): void {
    this.taken.waits++;
    this.taken.waitedMs += ms;
  }

  refusedPast(target: string, asked: readonly AskedWait[]): void {
    const seen = this.refused.get(target);
    if (seen) seen.requests++;
    else this.refused.set(target, { target, requests: 1, asked: [...asked] });
  }

  isRefusing(target: string): boolean {
    return this.refused.has(target);
  }

  summary(): Backpressure {
    return { ...this.taken };
  }

  refusing(): Refusing[] {
    return [...this.refused.values()];
  }
}

/** A6's pushback: a signed 32-bit integer in ASCII with no unnecessary leading zeros. */
const PUSHBACK = /^(?:0|-?[1-9]\d{0,9})$/;

/**
 * The wait a gRPC answer asks for (gRFC A6, "Pushback"): RESOURCE_EXHAUSTED with grpc-retry-pushback-ms, in its
 * trailers or, for a trailers-only answer, its headers. A non-negative value is a wait in milliseconds; a negative or
 * malformed one asks the client not to retry, and no pushback at all is no invitation to: then the answer stands.
 */
export function pushbackWait(
  code: number,
  trailers: Readonly<Record<string, readonly string[]>>,
  headers: Readonly<Record<string, readonly string[]>>,
): AskedWait | undefined {
  if (code !== Status.RESOURCE_EXHAUSTED) return undefined;
  const value = (trailers["grpc-retry-pushback-ms"] ?? headers["grpc-retry-pushback-ms"])?.[0]?.trim();
  if (value === undefined || !PUSHBACK.test(value)) return undefined;
  const ms = Number(value);
  return ms >= 0 && ms <= 2 ** 31 - 1 ? { ms, answer: "RESOURCE_EXHAUSTED" } : undefined;
}

/** Resolves after `ms`, or at once when `signal` is aborted (the check's time is up). */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

export interface WaitOut<T> {
  /** Sends the request once and returns the answer. */
  send: () => Promise<T>;
  /** The wait an answer asks for, or undefined when the answer stands (it is the check's to judge). */
  askedWait: (answer: T) => AskedWait | undefined;
  log: BackpressureLog;
  /** The target's address, for the line that ends the run when it keeps refusing. */
  target: string;
  signal?: AbortSignal;
}

/**
 * Sends a request, and again after each wait its answers ask for, within the bound. Returns the last answer: one that
 * stands, or the refusal past the bound (noted in the log, so that the run ends "keeps refusing" whatever a check
 * made of it), or the refusal under way when the check's time ran out.
 */
export async function waitOut<T>({ send, askedWait, log, target, signal }: WaitOut<T>): Promise<T> {
  const asked: AskedWait[] = [];
  for (;;) {
    const answer = await send();
    const wait = askedWait(answer);
    if (wait === undefined) return answer;
    asked.push(wait);
    // Once a target refused one request past the bound the run ends "keeps refusing": waiting again changes nothing.
    if (asked.length > MAX_WAITS_PER_REQUEST || wait.ms > MAX_WAIT_MS || log.isRefusing(target)) {
      log.refusedPast(target, asked);
      return answer;
    }
    if (signal?.aborted) return answer;
    log.waited(wait.ms);
    await pause(wait.ms, signal);
    if (signal?.aborted) return answer;
  }
}

/**
 * One target that kept refusing, in words: "cannot check: ADDRESS keeps refusing (6 answers 429 with waits of 1 s,
 * ...)".
 */
export function refusingLine(r: Refusing): string {
  const answers = [...new Set(r.asked.map((a) => a.answer))].join("/");
  const waits = r.asked.map((a) => `${a.ms / 1000} s`).join(", ");
  const more = r.requests > 1 ? `; ${r.requests} requests refused past the bound` : "";
  return (
    `cannot check: ${r.target} keeps refusing (${r.asked.length} ${r.asked.length === 1 ? "answer" : "answers"} ` +
    `${answers} with waits of ${waits}${more}): the run waits at most ${MAX_WAITS_PER_REQUEST} times per request, ` +
    `none over ${MAX_WAIT_MS / 1000} s`
  );
}
