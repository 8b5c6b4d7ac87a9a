// What "the reply varies by itself" means, judged over time rather than from three quick calls: the same new
// request on fresh connections, repeated; a reply that changes once and then stays is history, not a clock; and
// what does vary by itself (a clock, an id, a random token) is told apart by its segments, so that history can
// still be judged on the rest of the reply.
import { randomBytes } from "node:crypto";
import type { CheckContext } from "../../../harness/check.js";
import { helloReply, openAhead, show } from "./calls.js";
import { callsStarted, exclusively } from "./exclusive.js";

/** Time between samples of the same request that a clock in whole seconds cannot sit still through. */
export const TICK_MS = 1100;

/** Segments that look like clocks, ids and random tokens, whatever the request was. */
const SEGMENTS: readonly [RegExp, string][] = [
  [/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, "<uuid>"],
  [/\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?/g, "<time>"],
  [/\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b/g, "<time>"],
];

/** Runs of 8 or more base64 or hex characters: a random token when they mix at least two of lower, upper, digits. */
const TOKEN = /[A-Za-z0-9+/_-]{8,}={0,2}/g;
const mixed = (t: string): boolean => [/[a-z]/, /[A-Z]/, /\d/].filter((re) => re.test(t)).length >= 2;

/** The reply with clock-, id- and token-like segments replaced by their kind. */
export function maskSegments(body: string): string {
  return SEGMENTS.reduce((s, [re, kind]) => s.replace(re, kind), body).replace(TOKEN, (t) =>
    mixed(t) ? "<token>" : t,
  );
}

/** The reply with numbers replaced too: what is left when everything that may count or tick is taken out. */
const maskNumbers = (body: string): string => maskSegments(body).replace(/\d+/g, "<n>");

export type VariationKind =
  /** Every fresh reply to the same request was the same, over time. */
  | "same"
  /** Fresh replies differed only in clock-, id-, token- or number-like segments. */
  | "segments"
  /** Fresh replies differed in more than such segments: nothing can be compared whole. */
  | "free"
  /** A reply changed once and then stayed: the server remembers requests. */
  | "history";

export interface VariationProfile {
  kind: VariationKind;
  /** Whether replies were there to compare at all. */
  compared: boolean;
  /** What was seen, for reports. */
  evidence: string;
  /** Fresh replies never differed. */
  deterministic: boolean;
}

/**
 * Word by word, a token may stand for another of the same length: a random token that drew one class of characters
 * only.
 */
function sameButTokens(a: string, b: string): boolean {
  const split = (s: string) => s.split(/(\s+|[:=,;#()[\]{}<>"'])/);
  const x = split(a);
  const y = split(b);
  const token = /^[A-Za-z0-9+/_-]{8,}={0,2}$/;
  const number = /^\d+$/;
  return (
    x.length === y.length &&
    x.every(
      (w, i) =>
        w === y[i] ||
        (number.test(w) && number.test(y[i]!)) ||
        (w.length === y[i]!.length && token.test(w) && token.test(y[i]!)),
    )
  );
}

/** Whether two replies to the same request agree, given what varies by itself. */
export function sameReply(profile: VariationProfile, a: string, b: string): boolean {
  if (a === b) return true;
  if (profile.kind === "segments")
    return maskSegments(a) === maskSegments(b) || maskNumbers(a) === maskNumbers(b) || sameButTokens(a, b);
  return profile.kind === "free";
}

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });

interface Sample {
  body: string;
  atMs: number;
}

async function sample(ctx: CheckContext, request: string): Promise<Sample | string> {
  const reply = await helloReply(ctx, request, { channel: "fresh" });
  return reply.ok ? { body: reply.message.body, atMs: performance.now() } : reply.reason;
}

/**
 * Asks a request no one has sent before, on fresh connections: three times, and twice more after a pause a clock in
 * whole seconds cannot sit through. Five calls. With `overlap`, other checks' calls may go on meanwhile, the pause
 * above all: nothing a legal server is sent changes its reply to a new request only this probe sends (a legal
 * reply may change only with stored data, and the checks that may run beside this probe, the history checks, send
 * Hello calls only, which store nothing: that is what they judge). A server that keeps state may be disturbed by
 * them, though, so that a defect would show as another: when replies differed at all and another call came between
 * the first sample and the last, the profile is measured again, pause included, with the target to itself. Replies
 * that stayed the same need no second look: calls beside them cannot make replies that vary look the same.
 */
async function measure(ctx: CheckContext, overlap: boolean): Promise<VariationProfile> {
  const request = `variation-probe-${randomBytes(6).toString("hex")}`;
  const samples: Sample[] = [];
  const take = async (n: number): Promise<string | undefined> => {
    for (let i = 0; i < n; i++) {
      const s = await sample(ctx, request);
      if (typeof s === "string") return s;
      samples.push(s);
    }
    return undefined;
  };
  const startedBefore = callsStarted(ctx);
  // Each sample on a connection of its own, opened ahead: the samples are still asked one after another.
  const quick = openAhead(ctx, 3);
  let failed = await take(3).finally(quick);
  if (overlap) answeredFirst.get(ctx.memo)?.(failed === undefined);
  if (failed)
    return { kind: "same", compared: false, deterministic: true, evidence: `no reply to compare (${failed})` };
  const later = openAhead(ctx, 2);
  await pause(TICK_MS, ctx.signal);
  failed = await take(2).finally(later);
  if (failed)
    return { kind: "same", compared: false, deterministic: true, evidence: `no reply to compare (${failed})` };
  const othersBetween = callsStarted(ctx) - startedBefore - samples.length;
  if (overlap && othersBetween > 0 && new Set(samples.map((s) => s.body)).size > 1)
    return exclusively(ctx, () => measure(ctx, false));
  const bodies = samples.map((s) => s.body);
  const distinct = [...new Set(bodies)];
  const seen =
    `${show(request)} on fresh connections, ${samples.length} times over ` +
    `${Math.round(samples.at(-1)!.atMs - samples[0]!.atMs)} ms, got ${distinct.map(show).join(", ")}`;
  if (distinct.length === 1) return { kind: "same", compared: true, deterministic: true, evidence: seen };
  // Changed once among the quick calls and never again, though time passed: an earlier call left something behind.
  const changes = bodies.slice(1).filter((b, i) => b !== bodies[i]).length;
  if (changes === 1 && bodies[2] === bodies.at(-1)) {
    const at = bodies.findIndex((b) => b !== bodies[0]);
    return {
      kind: "history",
      compared: true,
      deterministic: false,
      evidence:
        `the reply to a new request changed at its call ${at + 1} and then stayed the same over ${TICK_MS} ms: the ` +
        `server remembers earlier calls (${seen})`,
    };
  }
  const segmentsOnly =
    new Set(bodies.map(maskSegments)).size === 1 ||
    new Set(bodies.map(maskNumbers)).size === 1 ||
    bodies.every((x) => sameButTokens(bodies[0]!, x));
  return {
    kind: segmentsOnly ? "segments" : "free",
    compared: true,
    deterministic: false,
    evidence: segmentsOnly
      ? `the reply varies by itself in clock-, id- or number-like segments only (${seen})`
      : `the reply varies by itself (${seen})`,
  };
}

/**
 * The target's variation profile, measured once a run: five calls of a new request on fresh connections, the last
 * two after a pause of TICK_MS, since a clock in whole seconds sits still through any number of quick calls. Other
 * checks' calls may go on beside it (see measure): a reply that varied while they did is measured again, alone.
 */
export function variationProfile(ctx: CheckContext): Promise<VariationProfile> {
  let memo = ctx.memo.get("variation") as Promise<VariationProfile> | undefined;
  if (!memo) {
    ctx.memo.set("variation-answered", new Promise<boolean>((resolve) => answeredFirst.set(ctx.memo, resolve)));
    memo = measure(ctx, true);
    memo.then(
      () => answeredFirst.get(ctx.memo)?.(false),
      () => answeredFirst.get(ctx.memo)?.(false),
    );
    ctx.memo.set("variation", memo);
  }
  return memo;
}

/** Settles the run's "did the probe's first samples get replies" question; later calls do nothing. */
const answeredFirst = new WeakMap<object, (answered: boolean) => void>();

/**
 * Runs a history check's body beside the other history checks once the variation probe's first samples got
 * replies; a target that did not answer them has each body run with the target to itself, one after another in the
 * order they asked, as before they ran side by side, so that which check meets its silence first does not change.
 */
export async function besideOthers<T>(ctx: CheckContext, body: () => Promise<T>): Promise<T> {
  void variationProfile(ctx).catch(() => undefined);
  const answered = await (ctx.memo.get("variation-answered") as Promise<boolean>);
  return answered ? body() : exclusively(ctx, body);
}

/** Whether replies a and b to the same request differ by more than what varies by itself. */
export async function differ(
  ctx: CheckContext,
  a: string,
  b: string,
): Promise<{ differ: boolean; profile: VariationProfile }> {
  const profile = await variationProfile(ctx);
  return { differ: !sameReply(profile, a, b), profile };
}

export type Comparison = { verdict: "same" | "differ"; note: string } | { verdict: "not-compared"; note: string };

/**
 * For checks whose subject is not history: two replies that should be the same. Differences explained by what
 * varies by itself are the same; with a reply that varies freely or a server that remembers requests nothing can be
 * compared (grpc.stateless.* reports those), and the note says so.
 */
export async function compareReplies(ctx: CheckContext, a: string, b: string): Promise<Comparison> {
  if (a === b) return { verdict: "same", note: "" };
  const d = await differ(ctx, a, b);
  if (!d.differ)
    return { verdict: "same", note: d.profile.kind === "segments" ? " (apart from segments that vary by itself)" : "" };
  if (d.profile.kind === "free" || d.profile.kind === "history") {
    return { verdict: "not-compared", note: `replies not compared: ${d.profile.evidence}` };
  }
  return { verdict: "differ", note: "" };
}
