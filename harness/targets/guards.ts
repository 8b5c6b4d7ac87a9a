// Guards over any unary transport, as interceptors are in connect-es: each takes the next call and returns one that
// behaves the same but for what it guards. The silence guard makes once more a call that got no answer in time and
// ends the run's waiting on a target that stopped answering; the crowding guard sends again alone a call refused or
// dropped while others were in flight.
import { decodeMessage, hex } from "../../common/message.js";
import { ConformanceError } from "../errors.js";
import { createLimiter } from "../limiter.js";
import { droppedBeforeAnswer, HELLO_PATH, Status, type UnaryCallOptions, type UnaryResult } from "../protocols/rpc.js";

export type UnaryCall = (request: Uint8Array, options?: UnaryCallOptions) => Promise<UnaryResult>;
export type Interceptor = (next: UnaryCall) => UnaryCall;

/** Calls with no complete answer that the target has not outlived, after which it counts as no longer answering. */
export const SILENT_CALLS_LIMIT = 3;
/** Times a call refused or dropped beside other calls is sent again, one call at a time. */
const CROWDED_RETRIES = 3;
/** Requests named in the line that ends the run; every one is in the error's suspects (the report's details). */
const SUSPECTS_SHOWN = 8;
/** Silent calls remembered at most: the guard asks whether the target lives long before this many pile up. */
const SILENT_KEPT = 1024;
/**
 * RFC 9113 6.9.2: the bytes a client may send on a new stream before the server grants more. A request within it (with
 * gRPC's 5-byte prefix) was delivered whole once sent; a larger one may have been held back by the server's window.
 */
const INITIAL_WINDOW = 65_535;
/** A client's deadline timer may fire a little before the deadline by the clock read here (timers round to a ms). */
const DEADLINE_EARLY_MS = 5;

export interface SilenceGuardOptions {
  /** The address as the user gave it, for the line that ends the run. */
  address: string;
  timeoutMs: number;
  /** Sends a request the target served before, on a new connection: does it still answer? */
  resend(request: Uint8Array): Promise<UnaryResult>;
}

export interface SilenceGuard {
  /**
   * Runs one call under the guard: throws "unreachable" once the target is known to have stopped answering. A call
   * that ran out its time (`timedOut`) while no other silence stands is made once more before anyone sees it.
   */
  run<T>(
    request: Uint8Array | undefined,
    call: () => Promise<T>,
    wasSilent: (result: T) => boolean,
    timedOut?: (result: T) => boolean,
  ): Promise<T>;
  /** Wraps unary calls: a call that ran to its deadline, or dropped before any header, got no answer. */
  intercept: Interceptor;
  /** A served call: its request (Hello, small) is what is sent again to ask whether the target still answers. */
  served(request: Uint8Array, options: UnaryCallOptions | undefined, result: UnaryResult): void;
}

/**
 * The target stopped answering: every call from now on fails with this. `suspects` are the requests it was sent and
 * never answered before it went silent, likeliest first: one of them may be what stopped it.
 */
export class TargetStopped extends ConformanceError {
  override name = "TargetStopped";
  constructor(
    message: string,
    readonly suspects: readonly (Uint8Array | undefined)[],
  ) {
    super("unreachable", message);
  }
}

/** What an outcome says of a call that failed because the target had stopped: its suspects, when there are any. */
export const suspectsOf = (err: unknown): { suspects?: readonly (Uint8Array | undefined)[] } =>
  err instanceof TargetStopped && err.suspects.length > 0 ? { suspects: err.suspects } : {};

/**
 * A target that stopped answering would make every later check wait out its timeout. After a few silent calls, a
 * request it answered before is sent again on a new connection: answered, the silence was those inputs' (a hang on a
 * specific input) and checks go on; unanswered, the rest fail at once, naming the inputs after which it stopped.
 *
 * Which inputs is read from evidence, not from which call happened to come back first: every call is kept in a
 * ledger with when it started and ended, and a silence is cleared only by an answer to a call begun after it
 * ended (a reply the target sent before it died can arrive after another connection dropped, and says nothing of
 * what came after). The suspects are the requests sent before the first silence still standing that got no answer.
 */
export function createSilenceGuard(options: SilenceGuardOptions): SilenceGuard {
  const state = newSilenceState();
  const stillAlive = async (): Promise<boolean> =>
    state.knownGood !== undefined && (await options.resend(state.knownGood)).code === Status.OK;
  const guard: SilenceGuard = {
    async run(request, call, wasSilent, timedOut) {
      await checkDead(state, options, stillAlive);
      const mine: Call = { request, startMs: performance.now(), endMs: Infinity };
      state.underWay.add(mine);
      let result: Awaited<ReturnType<typeof call>>;
      try {
        result = await call();
        // No answer in time is, once, a fact about this machine as much as the target (a starved process, a handshake
        // behind a busy CPU): the same request again, and only a second silence is the target's. Not while another
        // silence stands, so a target that died costs one timeout more, not one per call.
        if (timedOut?.(result) === true && state.silent.length === 0 && state.dead === undefined) result = await call();
      } finally {
        state.underWay.delete(mine);
        mine.endMs = performance.now();
      }
      if (wasSilent(result)) await noteSilent(state, options, stillAlive, mine, result);
      else noteAnswered(state, mine, result);
      return result;
    },
    intercept: (next) => (request, callOptions) => {
      let started = 0;
      const deadline = callOptions?.deadlineMs ?? options.timeoutMs;
      // A call that runs to its deadline got no usable answer, whether or not headers came first; one whose
      // connection failed or dropped before any header got none either. Each attempt is timed from its own start.
      const timedOut = (r: UnaryResult) =>
        r.code === Status.DEADLINE_EXCEEDED && performance.now() - started >= deadline - DEADLINE_EARLY_MS;
      const silent = (r: UnaryResult) => timedOut(r) || droppedBeforeAnswer(r);
      const attempt = () => ((started = performance.now()), next(request, callOptions));
      return guard.run(request, attempt, silent, timedOut);
    },
    served(request, callOptions, result) {
      if (
        result.code === Status.OK &&
        (callOptions?.path === undefined || callOptions.path === HELLO_PATH) &&
        request.length <= 1024
      )
        state.knownGood = request;
    },
  };
  return guard;
}

/** One call the guard saw: its request, and when it started and ended (Infinity while under way). */
interface Call {
  request: Uint8Array | undefined;
  startMs: number;
  endMs: number;
}

interface SilenceState {
  /** Silent calls the target has not been seen to outlive, in the order they ended. */
  silent: Call[];
  underWay: Set<Call>;
  /** Small requests the target served (their bytes), the last few hundred. */
  answered: Set<string>;
  knownGood: Uint8Array | undefined;
  dead: TargetStopped | undefined;
}

const newSilenceState = (): SilenceState => ({
  silent: [],
  underWay: new Set(),
  answered: new Set(),
  knownGood: undefined,
  dead: undefined,
});

const answeredKey = (r: Uint8Array | undefined) => (r === undefined || r.length > 1024 ? "" : hex(r));

/** A call whose connection was refused (the client's own words, not the target's). */
const refused = (r: unknown): boolean =>
  typeof r === "object" &&
  r !== null &&
  "details" in r &&
  typeof r.details === "string" &&
  "code" in r &&
  r.code === Status.UNAVAILABLE &&
  r.details.includes("ECONNREFUSED");

/** The target answered at `atMs` (or later): every silence that had ended by then, it outlived. */
function outlived(state: SilenceState, atMs: number): void {
  state.silent = state.silent.filter((c) => c.endMs > atMs);
}

async function checkDead(
  state: SilenceState,
  options: SilenceGuardOptions,
  stillAlive: () => Promise<boolean>,
): Promise<void> {
  if (state.dead === undefined && state.silent.length >= SILENT_CALLS_LIMIT) {
    const askedMs = performance.now();
    const count = state.silent.length;
    if (await stillAlive()) outlived(state, askedMs);
    else if (state.knownGood) {
      state.dead = stopped(
        state,
        options,
        (named) =>
          `stopped answering after ${named}: ${count} calls from it on got no answer (none within ` +
          `${options.timeoutMs} ms, or a connection refused or dropped), and neither did a request it had ` +
          `answered before`,
      );
    } else
      state.dead = new TargetStopped(
        `${options.address} stopped answering: ${count} calls in a row got no answer within ${options.timeoutMs} ` +
          `ms, and it has answered none`,
        [],
      );
  }
  if (state.dead !== undefined) throw state.dead;
}

async function noteSilent(
  state: SilenceState,
  options: SilenceGuardOptions,
  stillAlive: () => Promise<boolean>,
  call: Call,
  result: unknown,
): Promise<void> {
  state.silent.push(call);
  if (state.silent.length > SILENT_KEPT) state.silent.shift();
  // A refused connection is certain, unlike a slow answer: whether the target is gone is asked at once.
  if (state.dead === undefined && refused(result) && !(await stillAlive())) {
    state.dead = stopped(
      state,
      options,
      (named) =>
        `stopped answering after ${named}: connections are refused, and a request it answered before got no answer`,
    );
  }
  // The refusal says nothing of this call's own input: its check is told why instead, once the target had answered
  // before (a first call to a target that never listened gets its own result).
  if (state.dead !== undefined && state.knownGood) throw state.dead;
}

function noteAnswered(state: SilenceState, call: Call, result: unknown): void {
  // An answer to a call begun after a silence ended shows the target lived on after it; one begun before shows nothing.
  outlived(state, call.startMs);
  // Served, not merely answered: a reset the dying target sent is no alibi.
  const served = typeof result === "object" && result !== null && "code" in result && result.code === Status.OK;
  if (served && answeredKey(call.request) !== "") state.answered.add(answeredKey(call.request));
  if (state.answered.size > 256) state.answered.delete(state.answered.values().next().value as string);
}

/** The end of the run's waiting on this target: the message, with the suspects named in it, and the suspects whole. */
function stopped(state: SilenceState, options: SilenceGuardOptions, says: (named: string) => string): TargetStopped {
  const suspects = suspectsIn(state);
  return new TargetStopped(`${options.address} ${says(describeSuspects(suspects))}`, suspects);
}

/**
 * What may have stopped the target: the requests sent before the first silence it did not outlive that it never
 * answered (those that went silent, and those still under way), distinct, likeliest first. A request it had served
 * before is the least likely cause; one too large to have been delivered whole without the server's leave comes after
 * one that was; nearer the moment it went silent comes before further from it.
 */
function suspectsIn(state: Pick<SilenceState, "silent" | "underWay" | "answered">): (Uint8Array | undefined)[] {
  const firstSign = Math.min(...state.silent.map((c) => c.endMs));
  const calls = [...state.silent, ...state.underWay].filter((c) => c.startMs <= firstSign);
  const rank = (c: Call) =>
    state.answered.has(answeredKey(c.request))
      ? 2
      : c.request !== undefined && c.request.length + 5 > INITIAL_WINDOW
        ? 1
        : 0;
  calls.sort((a, b) => rank(a) - rank(b) || b.startMs - a.startMs);
  return [...new Map(calls.map((c) => [c.request === undefined ? "" : hex(c.request), c.request])).values()];
}

function describeSuspects(distinct: readonly (Uint8Array | undefined)[]): string {
  if (distinct.length <= 1) return describeSent(distinct[0]);
  const shown = distinct.slice(0, SUSPECTS_SHOWN).map(describeSent).join("; ");
  const more =
    distinct.length > SUSPECTS_SHOWN ? `; and ${distinct.length - SUSPECTS_SHOWN} more, each in the details` : "";
  return (
    `one of the ${distinct.length} requests it had not answered when it went silent, likeliest first ` +
    `(${shown}${more})`
  );
}

/**
 * One line naming a request the target got: its body quoted and cut, or its bytes. Our own input, never the target's.
 */
export function describeSent(request: Uint8Array | undefined): string {
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
    // Crowded, RESOURCE_EXHAUSTED is a cap on calls at once as much as a size limit, whatever was served before (a
    // request larger than any served may be refused for the calls beside it, as checks run side by side in another
    // order): asked alone, it tells. Alone, it is taken at its word.
    const crowdedOut = (r: UnaryResult) => r.code === Status.RESOURCE_EXHAUSTED || droppedBeforeAnswer(r);
    // Asked again alone, a refusal that stays is this request's own (a body past a size limit, say): calls go
    // back to side by side.
    let { result, crowded } = limited
      ? await oneAtATime(() => once(request, callOptions))
      : await once(request, callOptions);
    for (let i = 0; i < CROWDED_RETRIES && crowded && crowdedOut(result); i++) {
      const was = limited;
      limited = true;
      ({ result, crowded } = await oneAtATime(async () => (await idle(), once(request, callOptions))));
      if (crowdedOut(result) && !crowded) limited = was;
    }
    return result;
  };
}
