// Where the HTTP interface keeps messages: the only state the server holds, behind an interface a test or another backend can replace.
import { randomUUID } from "node:crypto";

export interface StoredMessage {
  /** Server-assigned, opaque: a lowercase UUID, so it never looks like a word in a path. */
  readonly id: string;
  readonly body: string;
}

export interface MessageFilter {
  /** Exact match on the body. */
  body?: string;
}

/**
 * Asynchronous throughout so that a store backed by a database or a remote service fits without changing the
 * routes. Stored messages are frozen: callers cannot change stored data except through the store.
 */
export interface MessageStore {
  /** In creation order. */
  list(filter: MessageFilter): Promise<StoredMessage[]>;
  get(id: string): Promise<StoredMessage | undefined>;
  create(body: string): Promise<StoredMessage>;
  /** undefined when no message has that id: the collection is server-managed, so PUT never creates. */
  replace(id: string, body: string): Promise<StoredMessage | undefined>;
  /** false when no message had that id. */
  delete(id: string): Promise<boolean>;
}

export function createMemoryStore(): MessageStore {
  // A Map, not an object, so that no id (not even "__proto__") can reach a prototype.
  const messages = new Map<string, StoredMessage>();
  return {
    async list(filter) {
      const all = [...messages.values()];
      return filter.body === undefined ? all : all.filter((m) => m.body === filter.body);
    },
    async get(id) {
      return messages.get(id);
    },
    async create(body) {
      const message = Object.freeze({ id: randomUUID(), body });
      messages.set(message.id, message);
      return message;
    },
    async replace(id, body) {
      if (!messages.has(id)) return undefined;
      const message = Object.freeze({ id, body });
      messages.set(id, message);
      return message;
    },
    async delete(id) {
      return messages.delete(id);
    },
  };
}
