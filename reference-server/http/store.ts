// Where the HTTP interface keeps messages: the only state the server holds, behind an interface a test or another
// backend can replace.
import { randomUUID } from "node:crypto";

export interface StoredMessage {
  /** Server-assigned, opaque: a lowercase UUID, so it never looks like a word in a path. */
  readonly id: string;
  readonly body: string;
  /** 1 when created, one more at each replace: the ETag, so a client can update only what it last read. */
  readonly version: number;
}

/** What replace and delete did: done, no such message, or the message is at another version than the one required. */
export type WriteResult<T> = { ok: T } | { missing: true } | { conflict: StoredMessage };

export interface MessageFilter {
  /** Exact match on the body. */
  body?: string;
}

export interface PageRequest {
  /** At most this many messages. */
  limit: number;
  /** Where the previous page ended, as that page's `next` gave it; absent for the first page. */
  cursor?: string;
}

export interface MessagePage {
  messages: StoredMessage[];
  /** The cursor of the following page; absent on the last. */
  next?: string;
}

/**
 * The store is full: past its bound on messages or bytes, or its disk is. The HTTP interface answers 507 with the
 * remedy.
 */
export class StoreFullError extends Error {
  override readonly name = "StoreFullError";
  /** What makes room: deleting messages frees the store's bound, but not a full disk (PGlite reclaims no space). */
  readonly remedy: string;
  constructor(message: string, options?: { cause?: unknown; remedy?: string }) {
    super(message, options);
    this.remedy = options?.remedy ?? "delete messages to make room";
  }
}

/** A cursor the store never gave out. The HTTP interface answers 400. */
export class InvalidCursorError extends Error {
  override readonly name = "InvalidCursorError";
}

/** The store cannot be reached now (its database is down or restarting). The HTTP interface answers 503. */
export class StoreUnavailableError extends Error {
  override readonly name = "StoreUnavailableError";
}

/**
 * What can be wrong with an embedded store's data directory; `serve` ends with one exit code for each (see
 * harness/cli/serve-command.ts): another server holds it, or took it over; its contents are damaged; this user may
 * not use it; its disk is full or failed, or the engine stopped on it.
 */
export type DataDirProblem = "in-use" | "lost" | "damaged" | "denied" | "io";

/**
 * The embedded store's data directory cannot be used, or can no longer be: the message names it, the cause, and what to
 * do.
 */
export class DataDirError extends Error {
  override readonly name = "DataDirError";
  constructor(
    readonly problem: DataDirProblem,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Asynchronous throughout so that a store backed by a database or a remote service fits without changing the
 * routes. Stored messages are frozen: callers cannot change stored data except through the store.
 */
export interface MessageStore {
  /** One page, in creation order: a message created after a page was read appears on a later page, never twice. */
  list(filter: MessageFilter, page: PageRequest): Promise<MessagePage>;
  get(id: string): Promise<StoredMessage | undefined>;
  /** Throws StoreFullError past the store's bounds. */
  create(body: string): Promise<StoredMessage>;
  /**
   * Replaces the body atomically: of concurrent replaces, exactly one body is left. Never creates (the collection
   * is server-managed). With ifVersion, only when the message is at that version.
   */
  replace(id: string, body: string, ifVersion?: number): Promise<WriteResult<StoredMessage>>;
  /** With ifVersion, only when the message is at that version. A deleted message never comes back. */
  delete(id: string, ifVersion?: number): Promise<WriteResult<true>>;
  /** Whether the store answers now; a store with nothing to lose always does. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export interface StoreLimits {
  /** Messages held at once; default 100,000. */
  maxMessages?: number;
  /** UTF-8 bytes of bodies held at once; default 64 MiB. */
  maxBytes?: number;
  /**
   * Bytes an embedded store (pglite:) keeps free on its disk: a create or replace that would leave less is
   * refused as full (507) before PostgreSQL runs out of space; default 64 MiB, 0 turns the check off.
   */
  minFreeBytes?: number;
}

export const DEFAULT_STORE_LIMITS: Required<StoreLimits> = {
  maxMessages: 100_000,
  maxBytes: 64 * 1024 * 1024,
  minFreeBytes: 64 * 1024 * 1024,
};

interface Entry {
  readonly message: StoredMessage;
  /** Creation order; a cursor is the last one a page held. */
  readonly seq: number;
  readonly bytes: number;
}

export function createMemoryStore(limits: StoreLimits = {}): MessageStore {
  const { maxMessages, maxBytes } = { ...DEFAULT_STORE_LIMITS, ...limits };
  // A Map, not an object, so that no id (not even "__proto__") can reach a prototype. Insertion order is creation
  // order, and a replace keeps the entry's place.
  const entries = new Map<string, Entry>();
  let seq = 0;
  let bytes = 0;
  const full = (more: number, moreMessages: number) => {
    if (entries.size + moreMessages > maxMessages) return `the store holds its limit of ${maxMessages} messages`;
    if (bytes + more > maxBytes) return `the store holds its limit of ${maxBytes} bytes of message bodies`;
    return undefined;
  };
  /** The entry, unless it is missing or at another version than the one required. */
  const writable = (
    id: string,
    ifVersion: number | undefined,
  ): Entry | { missing: true } | { conflict: StoredMessage } => {
    const existing = entries.get(id);
    if (existing === undefined) return { missing: true };
    if (ifVersion !== undefined && existing.message.version !== ifVersion) return { conflict: existing.message };
    return existing;
  };
  return {
    async list(filter, page) {
      const after = page.cursor === undefined ? 0 : decodeCursor(page.cursor);
      const messages: StoredMessage[] = [];
      let last = 0;
      for (const entry of entries.values()) {
        if (entry.seq <= after || (filter.body !== undefined && entry.message.body !== filter.body)) continue;
        if (messages.length === page.limit) return { messages, next: encodeCursor(last) };
        messages.push(entry.message);
        last = entry.seq;
      }
      return { messages };
    },
    async get(id) {
      return entries.get(id)?.message;
    },
    async create(body) {
      const size = Buffer.byteLength(body);
      const refused = full(size, 1);
      if (refused !== undefined) throw new StoreFullError(refused);
      const message = Object.freeze({ id: randomUUID(), body, version: 1 });
      entries.set(message.id, { message, seq: ++seq, bytes: size });
      bytes += size;
      return message;
    },
    async replace(id, body, ifVersion) {
      const existing = writable(id, ifVersion);
      if (!("message" in existing)) return existing;
      const size = Buffer.byteLength(body);
      const refused = full(size - existing.bytes, 0);
      if (refused !== undefined) throw new StoreFullError(refused);
      const message = Object.freeze({ id, body, version: existing.message.version + 1 });
      entries.set(id, { message, seq: existing.seq, bytes: size });
      bytes += size - existing.bytes;
      return { ok: message };
    },
    async delete(id, ifVersion) {
      const existing = writable(id, ifVersion);
      if (!("message" in existing)) return existing;
      entries.delete(id);
      bytes -= existing.bytes;
      return { ok: true };
    },
    async ping() {
      return true;
    },
    async close() {},
  };
}

/** Opaque to clients: base64url of the position, so that nobody builds one by hand and expects it to mean more. */
export function encodeCursor(seq: number): string {
  return Buffer.from(`m${seq}`).toString("base64url");
}

export function decodeCursor(cursor: string): number {
  const text = Buffer.from(cursor, "base64url").toString("latin1");
  const seq = /^m(\d{1,15})$/.exec(text)?.[1];
  if (seq === undefined || encodeCursor(Number(seq)) !== cursor)
    throw new InvalidCursorError(`the cursor ${JSON.stringify(cursor.slice(0, 64))} was not given by this server`);
  return Number(seq);
}
