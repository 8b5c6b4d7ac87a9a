// A run's gRPC calls under one gate, so that a probe which counts calls or samples a reply over time can have the
// target to itself for a moment while the history checks otherwise run side by side (each with its own bodies).
import { AsyncLocalStorage } from "node:async_hooks";
import type { CheckContext } from "../../../harness/check.js";

interface Gate {
  /** Calls under way that do not hold the gate. */
  inFlight: number;
  /** The exclusive section under way, if any: resolves when it ends. */
  held: Promise<void> | undefined;
  /** Exclusive sections waiting, in order: each takes the gate when the one before it ends. */
  queue: Promise<void>;
  /** Resolved whenever inFlight drops to 0. */
  drained: (() => void)[];
  /** Calls started through the gate so far, this run: a probe that counts its own knows whether others came between. */
  started: number;
}

const gates = new WeakMap<object, Gate>();
/** The gate held by the code running in this async context (its own calls pass straight through). */
const holder = new AsyncLocalStorage<Gate>();

function gateOf(ctx: CheckContext): Gate {
  // Keyed by the run's memo, which every check of one run shares.
  let gate = gates.get(ctx.memo);
  if (!gate)
    gates.set(ctx.memo, (gate = { inFlight: 0, held: undefined, queue: Promise.resolve(), drained: [], started: 0 }));
  return gate;
}

/** One call to the target: waits while another probe has the target to itself. */
export async function gated<T>(ctx: CheckContext, call: () => Promise<T>): Promise<T> {
  const gate = gateOf(ctx);
  gate.started++;
  if (holder.getStore() === gate) return call();
  while (gate.held) await gate.held;
  gate.inFlight++;
  try {
    return await call();
  } finally {
    if (--gate.inFlight === 0) for (const done of gate.drained.splice(0)) done();
  }
}

/**
 * How many calls of the run have started through the gate: two readings and one's own count tell whether others came
 * between.
 */
export function callsStarted(ctx: CheckContext): number {
  return gateOf(ctx).started;
}

/**
 * Runs `section` with the target to itself: calls already under way finish first, and calls of other checks wait
 * until it ends (its own calls, made through `gated`, pass). Sections queue one after another, in order.
 */
export function exclusively<T>(ctx: CheckContext, section: () => Promise<T>): Promise<T> {
  const gate = gateOf(ctx);
  if (holder.getStore() === gate) return section();
  const mine = gate.queue.then(async () => {
    let release!: () => void;
    gate.held = new Promise<void>((r) => (release = r));
    try {
      while (gate.inFlight > 0) await new Promise<void>((r) => gate.drained.push(r));
      return await holder.run(gate, section);
    } finally {
      gate.held = undefined;
      release();
    }
  });
  gate.queue = mine.then(
    () => undefined,
    () => undefined,
  );
  return mine;
}
