// Whether each target answered anything at all while the checks ran: a run in which one answered nothing (every
// request failed at the connection level, say the server died right after the set-up probes) has judged nothing
// of it, and ends "unreachable", never "not conformant".
import { ConformanceError } from "../errors.js";
import { Status } from "../protocols/rpc.js";

/** The target methods that send something (as bound() in session.ts counts them). */
const SENDING = new Set(["unary", "raw", "exchange", "request"]);

/** A target the checks called that answered none of their calls, and how the first of them failed. */
export interface Unanswered {
  /** The flag and the address, as the user gave them: "--grpc 127.0.0.1:50051". */
  target: string;
  /** Calls that failed at the connection level: no status, no header came back. */
  failed: number;
  first: string;
}

export interface AnswerTally {
  /** The target, counting what each call it makes brought back; the same object's properties otherwise. */
  watch<T extends object>(target: T, label: string): T;
  /** The targets that were called, failed at the connection level at least once, and never answered. */
  unanswered(): Unanswered[];
}

type Heard = { answered: number; failed: number; first?: string };

/**
 * What a call brought back: an answer (any status or header of the target's, an error of its protocol included),
 * a failure at the connection level (with its words), or neither (a deadline the check chose ran out: no evidence).
 */
function heardOf(method: string, result: unknown): { answered: true } | { answered: false; why: string } | undefined {
  if (typeof result !== "object" || result === null) return undefined;
  const r = result as Record<string, unknown>;
  const failure = r.failure as { kind: string; message?: string } | undefined;
  const failed = (why: string | undefined) => ({ answered: false as const, why: why ?? "the connection failed" });
  if (method === "unary") {
    const empty =
      Object.keys((r.headers as object | undefined) ?? {}).length === 0 &&
      Object.keys((r.trailers as object | undefined) ?? {}).length === 0;
    if (!empty) return { answered: true };
    if (r.code === Status.UNAVAILABLE) return failed(typeof r.details === "string" ? r.details : undefined);
    return r.code === Status.DEADLINE_EXCEEDED || r.code === Status.CANCELLED ? undefined : { answered: true };
  }
  const status = method === "raw" ? r.httpStatus : r.status;
  if (typeof status === "number" && status > 0) return { answered: true };
  if (failure?.kind === "timeout" || failure === undefined) return undefined;
  return failed(failure.kind === "connection" ? failure.message : failure.kind);
}

export function createAnswerTally(): AnswerTally {
  const heard = new Map<string, Heard>();
  const note = (label: string, outcome: ReturnType<typeof heardOf>) => {
    if (outcome === undefined) return;
    const h = heard.get(label) ?? { answered: 0, failed: 0 };
    heard.set(label, h);
    if (outcome.answered) h.answered++;
    else {
      h.failed++;
      h.first ??= (outcome.why.split("\n")[0] ?? "").slice(0, 200);
    }
  };
  return {
    watch(target, label) {
      return new Proxy(target, {
        get(t, key, receiver) {
          const value = Reflect.get(t, key, receiver) as unknown;
          if (typeof value !== "function" || !SENDING.has(String(key))) return value;
          return async (...args: unknown[]) => {
            try {
              const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(t, args);
              note(label, heardOf(String(key), result));
              return result;
            } catch (err) {
              // The target known to have stopped answering (the silence guard, the HTTP target's): no answer.
              if (err instanceof ConformanceError && err.code === "unreachable")
                note(label, { answered: false, why: err.message });
              throw err;
            }
          };
        },
      });
    },
    unanswered: () =>
      [...heard.entries()]
        .filter(([, h]) => h.answered === 0 && h.failed > 0)
        .map(([target, h]) => ({ target, failed: h.failed, first: h.first ?? "" })),
  };
}
