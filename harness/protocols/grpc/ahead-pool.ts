// Fresh connections opened ahead of the calls that will take them: a check that knows it will make calls on fresh
// connections asks for them, and they connect side by side, at most a bound at once, while its calls go on, instead of
// each connecting only when its call comes (a round trip each through a slow link, one after another). Each is taken
// by one call, never shared: a connection opened ahead is as fresh as one opened at the call, since no call went on it
// before. What is not taken when the check gives its asking back is closed unused.

export interface AheadConnections<C> {
  /** Starts opening a connection of one call. */
  open(): C;
  /** Whether a connection opened ahead can still carry its call as a new one would: not failed, not shut. */
  usable(connection: C): boolean;
  close(connection: C): void;
}

/** One check's asking: connections it will still take, and how many may be open ahead for it at once. */
interface Asking {
  left: number;
  limit: number;
}

/** Connections opened ahead, first opened first taken; kept at most the largest bound any asking gives. */
export class AheadPool<C> {
  readonly #ready: C[] = [];
  readonly #asking = new Set<Asking>();
  readonly #connections: AheadConnections<C>;

  constructor(connections: AheadConnections<C>) {
    this.#connections = connections;
  }

  /** Connections opened ahead, not yet taken. */
  get size(): number {
    return this.#ready.length;
  }

  /**
   * Asks for `count` connections to come, at most `limit` open ahead at once: they start opening now. Returns what
   * gives the asking back: connections opened for it and not taken are closed then.
   */
  ask(count: number, limit: number): () => void {
    if (!(count >= 1 && limit >= 1)) return () => undefined;
    const asking = { left: Math.floor(count), limit: Math.floor(limit) };
    this.#asking.add(asking);
    this.#fill();
    return () => {
      if (this.#asking.delete(asking)) this.#trim();
    };
  }

  /**
   * A connection opened ahead, for one call: the first opened that can still carry it (one that failed is closed and
   * not opened again, so a target that is gone is not asked again and again); undefined when there is none, and the
   * caller opens its own, as without the pool.
   */
  take(): C | undefined {
    while (this.#ready.length > 0) {
      const connection = this.#ready.shift() as C;
      if (!this.#connections.usable(connection)) {
        this.#connections.close(connection);
        continue;
      }
      for (const asking of this.#asking) {
        if (--asking.left <= 0) this.#asking.delete(asking);
        break;
      }
      this.#fill();
      return connection;
    }
    return undefined;
  }

  /** Closes what is open ahead and forgets every asking: the target is being closed. */
  close(): void {
    this.#asking.clear();
    this.#trim();
  }

  /** How many may be open ahead now: what the askings will still take, within the largest of their bounds. */
  #wanted(): number {
    let left = 0;
    let limit = 0;
    for (const asking of this.#asking) {
      left += asking.left;
      limit = Math.max(limit, asking.limit);
    }
    return Math.min(left, limit);
  }

  #fill(): void {
    while (this.#ready.length < this.#wanted()) this.#ready.push(this.#connections.open());
  }

  #trim(): void {
    const wanted = this.#wanted();
    while (this.#ready.length > wanted) this.#connections.close(this.#ready.pop() as C);
  }
}
