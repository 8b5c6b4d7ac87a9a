// Guards over any unary transport, as interceptors are in connect-es: each takes the next call and returns one that
// behaves the same but for what it guards. The silence guard ends the run's waiting on a target that stopped
// answering; the crowding guard sends again alone a call refused or dropped while others were in flight.
import { decodeMessage, hex } from "../../contract/message.js";
import { ConformanceError } from "../errors.js";
import { createLimiter } from "../limiter.js";
import { droppedBeforeAnswer, HELLO_PATH, Status, type UnaryCallOptions, type UnaryResult } from "./grpc-target.js";

export type UnaryCall = (request: Uint8Array, options?: UnaryCallOptions) => Promise<UnaryResult>;
export type Interceptor = (next: UnaryCall) => UnaryCall;

/** Calls in a row with no complete answer within the timeout, after which the target counts as no longer answering. */
export const SILENT_CALLS_LIMIT = 3;
/** Times a call refused or dropped beside other calls is sent again, one call at a time. */
const CROWDED_RETRIES = 3;
/** Requests named when the target stopped answering with several under way; the rest are counted. */
const SUSPECTS_SHOWN = 8;

export interface SilenceGuardOptions {
  /** The address as the user gave it, for the line that ends the run. */
  address: string;
  timeoutMs: number;
  /** Sends a request the target served before, on a new connection: does it still answer? */
  resend(request: Uint8Array): Promise<UnaryResult>;
}

export interface SilenceGuard {
  /** Runs one call under the guard: throws "unreachable" once the target is known to have stopped answering. */
  run<T>(request: Uint8Array | undefined, call: () => Promise<T>, wasSilent: (result: T) => boolean): Promise<T>;
  /** Wraps unary calls: a call that ran to its deadline, or dropped before any header, got no answer. */
  intercept: Interceptor;
  /** A served call: its request (Hello, small) is what is sent again to ask whether the target still answers. */
  served(request: Uint8Array, options: UnaryCallOptions | undefined, result: UnaryResult): void;
}

/**
 * A target that stopped answering would make every later check wait out its timeout. After a few silent calls in a
 * row, a request it answered before is sent again on a new connection: answered, the silence was those inputs' (a
 * hang on a specific input) and checks go on; unanswered, the rest fail at once, naming the input after which it
 * stopped.
 */
export function createSilenceGuard(options: SilenceGuardOptions): SilenceGuard {
  const state = newSilenceState();
  const stillAlive = async (): Promise<boolean> => state.knownGood !== undefined && (await options.resend(state.knownGood)).code === Status.OK;
  const guard: SilenceGuard = {
    async run(request, call, wasSilent) {
      await checkDead(state, options, stillAlive);
      const mine = { request };
      const startedMs = performance.now();
      state.underWay.add(mine);
      let result: Awaited<ReturnType<typeof call>>;
      try {
        result = await call();
      } finally {
        state.underWay.delete(mine);
        state.ended.push({ request, atMs: performance.now() });
        if (state.ended.length > 16) state.ended.shift();
      }
      if (wasSilent(result)) await noteSilent(state, options, stillAlive, request, result, startedMs);
      else noteAnswered(state, request, result);
      return result;
    },
    intercept: (next) => (request, callOptions) => {
      const started = performance.now();
      const deadline = callOptions?.deadlineMs ?? options.timeoutMs;
      // A call that runs to its deadline got no usable answer, whether or not headers came first; one whose
      // connection failed or dropped before any header got none either.
      const silent = (r: UnaryResult) => (r.code === Status.DEADLINE_EXCEEDED && performance.now() - started >= deadline) || droppedBeforeAnswer(r);
      return guard.run(request, () => next(request, callOptions), silent);
    },
    served(request, callOptions, result) {
      if (result.code === Status.OK && (callOptions?.path === undefined || callOptions.path === HELLO_PATH) && request.length <= 1024) state.knownGood = request;
    },
  };
  return guard;
}

interface SilenceState {
  silent: number;
  /** The requests under way when the first of the silent calls came back: one of them may be what stopped the target. */
  firstSilent: (Uint8Array | undefined)[];
  underWay: Set<{ request: Uint8Array | undefined }>;
  /** Small requests the target served (their bytes), the last few hundred. */
  answered: Set<string>;
  /** The last calls that ended, and when: one that ended while the first silent call was under way is a suspect too. */
  ended: { request: Uint8Array | undefined; atMs: number }[];
  knownGood: Uint8Array | undefined;
  dead: string | undefined;
}

const newSilenceState = (): SilenceState => ({ silent: 0, firstSilent: [], underWay: new Set(), answered: new Set(), ended: [], knownGood: undefined, dead: undefined });

const answeredKey = (r: Uint8Array | undefined) => (r === undefined || r.length > 1024 ? "" : hex(r));

/** A call whose connection was refused (the client's own words, not the target's). */
const refused = (r: unknown): boolean =>
  typeof r === "object" && r !== null && "details" in r && typeof r.details === "string" && "code" in r && r.code === Status.UNAVAILABLE && r.details.includes("ECONNREFUSED");

async function checkDead(state: SilenceState, options: SilenceGuardOptions, stillAlive: () => Promise<boolean>): Promise<void> {
  if (state.dead === undefined && state.silent >= SILENT_CALLS_LIMIT) {
    if (await stillAlive()) state.silent = 0;
    else if (state.knownGood) state.dead = `${options.address} stopped answering after ${describeSuspects(state.firstSilent)}: ${state.silent} calls in a row from it on got no answer (none within ${options.timeoutMs} ms, or a connection refused or dropped), and neither did a request it had answered before`;
    else state.dead = `${options.address} stopped answering: ${state.silent} calls in a row got no answer within ${options.timeoutMs} ms, and it has answered none`;
  }
  if (state.dead !== undefined) throw new ConformanceError("unreachable", state.dead);
}

async function noteSilent(state: SilenceState, options: SilenceGuardOptions, stillAlive: () => Promise<boolean>, request: Uint8Array | undefined, result: unknown, startedMs: number): Promise<void> {
  // Calls side by side go silent together when the target dies: which of them killed it cannot be told, so every
  // request then under way is named, this one first. A request the target had answered before is the least likely
  // cause: those come last.
  if (state.silent++ === 0) {
    const justEnded = state.ended.filter((e) => e.request !== request && e.atMs >= startedMs).map((e) => e.request);
    const suspects = [request, ...[...state.underWay].map((u) => u.request), ...justEnded];
    const before = (r: Uint8Array | undefined) => state.answered.has(answeredKey(r));
    state.firstSilent = [...suspects.filter((r) => !before(r)), ...suspects.filter(before)];
  }
  // A refused connection is certain, unlike a slow answer: whether the target is gone is asked at once.
  if (refused(result) && !(await stillAlive())) {
    state.dead = `${options.address} stopped answering after ${describeSuspects(state.firstSilent)}: connections are refused, and a request it answered before got no answer`;
    // The refusal says nothing of this call's own input: its check is told why instead, once the target had
    // answered before (a first call to a target that never listened gets its own result).
    if (state.knownGood) throw new ConformanceError("unreachable", state.dead);
  }
}

function noteAnswered(state: SilenceState, request: Uint8Array | undefined, result: unknown): void {
  state.silent = 0;
  // Served, not merely answered: a reset the dying target sent is no alibi.
  const served = typeof result === "object" && result !== null && "code" in result && result.code === Status.OK;
  if (served && answeredKey(request) !== "") state.answered.add(answeredKey(request));
  if (state.answered.size > 256) state.answered.delete(state.answered.values().next().value as string);
}

function describeSuspects(requests: readonly (Uint8Array | undefined)[]): string {
  const distinct = [...new Map(requests.map((r) => [r === undefined ? "" : hex(r), r])).values()];
  if (distinct.length <= 1) return describeRequest(distinct[0]);
  const shown = distinct.slice(0, SUSPECTS_SHOWN).map(describeRequest).join("; ");
  const more = distinct.length > SUSPECTS_SHOWN ? `; and ${distinct.length - SUSPECTS_SHOWN} more` : "";
  return `one of the ${distinct.length} requests under way when it went silent (${shown}${more})`;
}

/** One line naming a request the target got: its body quoted and cut, or its bytes. Our own input, never the target's. */
function describeRequest(request: Uint8Array | undefined): string {
  if (!request) return "a hand-built request";
  const decoded = decodeMessage(request);
  if (!decoded.ok) return `the request bytes ${hex(request.subarray(0, 32))}${request.length > 32 ? "..." : ""}`;
  const q = JSON.stringify(decoded.message.body);
  return `the request with body ${q.length > 80 ? `${q.slice(0, 77)}..."` : q} (${request.length} bytes)`;
}

/**
 * RESOURCE_EXHAUSTED while other calls were in flight may be a legal cap on calls at once, which says nothing of
 * this request; a connection dropped before any answer may have been dropped for another call's input. Either way,
 * from then on calls go one at a time, and this one again. `admit` runs before a call counts as in flight (the
 * run's budget), so that waiting for it crowds nothing.
 */
export function withCrowdingGuard(next: UnaryCall, admit: (signal?: AbortSignal) => Promise<void>): UnaryCall {
  /** Calls under way, each marked once another was under way beside it. */
  const inFlight = new Set<{ crowded: boolean }>();
  let limited = false;
  let largestServed = 0;
  const oneAtATime = createLimiter(1);
  const idlers: (() => void)[] = [];
  /** Resolves once no call is under way. */
  const idle = () => (inFlight.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => idlers.push(resolve)));
  const once = async (request: Uint8Array, callOptions: UnaryCallOptions | undefined) => {
    await admit(callOptions?.signal);
    const mine = { crowded: inFlight.size > 0 };
    for (const other of inFlight) other.crowded = true;
    inFlight.add(mine);
    try {
      return { result: await next(request, callOptions), crowded: mine.crowded };
    } finally {
      inFlight.delete(mine);
      if (inFlight.size === 0) for (const resolve of idlers.splice(0)) resolve();
    }
  };
  return async (request, callOptions) => {
    // A request larger than any served so far is taken at its word: that refusal is most likely a size limit.
    const crowdedOut = (r: UnaryResult) => (r.code === Status.RESOURCE_EXHAUSTED && request.length <= largestServed) || droppedBeforeAnswer(r);
    // Asked again alone, a refusal that stays is this request's own (a body past a size limit, say): calls go
    // back to side by side.
    let { result, crowded } = limited ? await oneAtATime(() => once(request, callOptions)) : await once(request, callOptions);
    for (let i = 0; i < CROWDED_RETRIES && crowded && crowdedOut(result); i++) {
      const was = limited;
      limited = true;
      ({ result, crowded } = await oneAtATime(async () => (await idle(), once(request, callOptions))));
      if (crowdedOut(result) && !crowded) limited = was;
    }
    if (result.code === Status.OK) largestServed = Math.max(largestServed, request.length);
    return result;
  };
}
