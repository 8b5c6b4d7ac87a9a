// What a run learned a target offers, resource by resource, each with its evidence: how a collection creates (POST,
// or PUT at an id the client chooses, as a store does), which operations a resource refuses (405 with Allow, 501).
// Checks write it as they learn; the report and the console show it, so that "not applicable" names its evidence.

/** One resource's capabilities: each operation learned, with what showed it. */
export interface ResourceCapabilities {
  /** The resource as a template: "/messages", "/messages/{id}", "/messages/{id}/notes". */
  resource: string;
  /** Operation name ("create", "replace", ...) to what the run learned of it, in words with the evidence. */
  operations: Record<string, string>;
}

/** Bounded like everything the target shapes: a server of a thousand collections is not a thousand entries. */
const MAX_RESOURCES = 32;

export class CapabilityLog {
  readonly #resources = new Map<string, Record<string, string>>();

  /** Records what the run learned of one operation on one resource; the first word stands. */
  learn(resource: string, operation: string, finding: string): void {
    let ops = this.#resources.get(resource);
    if (!ops) {
      if (this.#resources.size >= MAX_RESOURCES) return;
      this.#resources.set(resource, (ops = {}));
    }
    ops[operation] ??= finding;
  }

  /** What was learned of one operation, if anything. */
  of(resource: string, operation: string): string | undefined {
    return this.#resources.get(resource)?.[operation];
  }

  list(): ResourceCapabilities[] {
    return [...this.#resources].map(([resource, operations]) => ({ resource, operations: { ...operations } }));
  }
}
