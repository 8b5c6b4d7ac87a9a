// A budget of calls for a whole run and a rate limit, so that a run against a remote endpoint stays polite.
import { ConformanceError } from "../errors.js";

export interface BudgetOptions {
  /** Calls allowed for the whole run. */
  maxCalls: number;
  /** Calls per second; Infinity for no limit. */
  rate: number;
}

export class CallBudget {
  #used = 0;
  #next = 0;
  constructor(readonly options: BudgetOptions) {}

  get used(): number {
    return this.#used;
  }

  /** Takes one call from the budget, waiting for the rate limit; throws when the budget is spent. */
  async take(signal?: AbortSignal): Promise<void> {
    if (this.#used >= this.options.maxCalls) {
      throw new ConformanceError("config", `the run's budget of ${this.options.maxCalls} calls is spent (--max-rpcs)`);
    }
    this.#used++;
    if (!Number.isFinite(this.options.rate)) return;
    const now = performance.now();
    const at = Math.max(now, this.#next);
    this.#next = at + 1000 / this.options.rate;
    const wait = at - now;
    if (wait > 0) {
      await new Promise<void>((resolve, reject) => {
        const abort = () => (clearTimeout(timer), reject(new Error("aborted")));
        const timer = setTimeout(() => (signal?.removeEventListener("abort", abort), resolve()), wait);
        signal?.addEventListener("abort", abort, { once: true });
      });
    }
  }
}
