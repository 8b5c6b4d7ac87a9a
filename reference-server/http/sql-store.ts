// The message store in SQL: one schema and one set of statements for PostgreSQL, whether a server shared by any
// number of replicas (through pg's pool) or embedded in the process (PGlite, Postgres compiled to WebAssembly).
import { randomUUID } from "node:crypto";
import {
  decodeCursor,
  DEFAULT_STORE_LIMITS,
  encodeCursor,
  StoreFullError,
  StoreUnavailableError,
  type MessageStore,
  type StoredMessage,
  type StoreLimits,
} from "./store.js";

/**
 * What the store needs of a database: parameterised statements, and a transaction that runs several on one connection.
 */
export interface SqlDatabase {
  query<R>(sql: string, params?: readonly unknown[]): Promise<{ rows: R[] }>;
  /** Throws CommitOutcomeUnknown when the connection was lost once COMMIT was sent: it may have committed. */
  transaction<T>(work: (tx: Pick<SqlDatabase, "query">) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** Whether an error means the database cannot be reached now (as opposed to a wrong statement). */
  isUnavailable(err: unknown): boolean;
  /**
   * Throws StoreFullError when writing this many more bytes would leave its disk short of space; where the
   * database is this process's own (embedded). A server on another host guards its own disk.
   */
  ensureRoom?(bytes: number): Promise<void>;
}

/** A transaction whose COMMIT was sent and whose answer was lost with the connection: committed, or not. */
export class CommitOutcomeUnknown extends Error {
  override name = "CommitOutcomeUnknown";
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

/** How long a create whose COMMIT went unanswered goes on asking whether it took (the database restarting, say). */
const OUTCOME_WAIT_MS = 10_000;
const OUTCOME_RETRY_MS = 200;
/** PostgreSQL's unique_violation. */
const UNIQUE_VIOLATION = "23505";

/**
 * Migrations, applied in order at start and recorded, each once. Safe when replicas start at once: the whole
 * sequence runs under a transaction-scoped advisory lock, so a second replica waits and then finds them applied.
 */
const MIGRATIONS: ReadonlyArray<readonly string[]> = [
  [
    `create table if not exists messages (
       seq bigserial primary key,            -- creation order: what a page's cursor names
       id uuid not null unique,
       body text not null,
       bytes integer not null,               -- UTF-8 bytes of body, for the store's bound
       version integer not null default 1    -- the ETag, one more at each replace
     )`,
    // Bodies may be far longer than a btree entry holds: the filter on a body goes through its digest.
    "create index if not exists messages_body on messages (md5(body))",
    // One row that counts what the store holds, updated in the same transaction as every write: the bound holds
    // across replicas, and no write needs count(*) over the table.
    `create table if not exists store_usage (
       only_row boolean primary key default true check (only_row),
       messages bigint not null,
       bytes bigint not null
     )`,
    "insert into store_usage (messages, bytes) values (0, 0) on conflict do nothing",
  ],
];

/** An arbitrary constant that names this schema's migration lock among the database's advisory locks. */
const MIGRATION_LOCK = 0x6578_616d;

export async function migrate(db: SqlDatabase): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query("select pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await tx.query(
      "create table if not exists schema_migrations (version integer primary key, applied_at timestamptz not " +
        "null default now())",
    );
    const applied = new Set(
      (await tx.query<{ version: number }>("select version from schema_migrations")).rows.map((r) => Number(r.version)),
    );
    for (const [i, statements] of MIGRATIONS.entries()) {
      if (applied.has(i + 1)) continue;
      for (const statement of statements) await tx.query(statement);
      await tx.query("insert into schema_migrations (version) values ($1)", [i + 1]);
    }
  });
}

interface Row {
  seq: string | number;
  id: string;
  /** The body's UTF-8 bytes (a Buffer from pg, a Uint8Array from PGlite): see COLUMNS. */
  body: Uint8Array;
  version: number;
}

/**
 * A message's columns, its body read as UTF-8 bytes and decoded here rather than as text by the driver: PGlite's
 * protocol reader decodes every text field with a TextDecoder left at its default, which drops a leading U+FEFF
 * as a byte order mark, so a body that began with one was acknowledged and then read back without it.
 */
const COLUMNS = "seq, id, convert_to(body, 'UTF8') as body, version";
/**
 * Keeps a leading U+FEFF (it is text); fatal, though the database holds only valid UTF-8, so nothing is ever read as
 * U+FFFD.
 */
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

const toMessage = (r: Row): StoredMessage =>
  Object.freeze({ id: r.id, body: utf8.decode(r.body), version: Number(r.version) });

/** ids are UUIDs in the table: anything else names no message, and must not reach the database as a bad cast. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Locks the message's row for the rest of the transaction, so that a concurrent replace or delete waits: of racing
 * writes exactly one body is left, and a deleted message is never written back. The row, unless it is missing or
 * at another version than the one required.
 */
async function lockForWrite(
  tx: Pick<SqlDatabase, "query">,
  id: string,
  ifVersion: number | undefined,
): Promise<(Row & { bytes: number }) | { missing: true } | { conflict: StoredMessage }> {
  const { rows } = await tx.query<Row & { bytes: number }>(
    `select ${COLUMNS}, bytes from messages where id = $1 for update`,
    [id],
  );
  const existing = rows[0];
  if (existing === undefined) return { missing: true };
  if (ifVersion !== undefined && Number(existing.version) !== ifVersion) return { conflict: toMessage(existing) };
  return existing;
}

/** What every statement of one SQL store needs: the database and the store's limits. */
interface SqlStore {
  db: SqlDatabase;
  maxMessages: number;
  maxBytes: number;
}

export function createSqlStore(db: SqlDatabase, limits: StoreLimits = {}): MessageStore {
  const { maxMessages, maxBytes } = { ...DEFAULT_STORE_LIMITS, ...limits };
  const store: SqlStore = { db, maxMessages, maxBytes };
  return {
    list: (filter, page) => guarded(db, () => listMessages(db, filter, page)),
    get: (id) =>
      guarded(db, async () => {
        if (!UUID.test(id)) return undefined;
        const { rows } = await db.query<Row>(`select ${COLUMNS} from messages where id = $1`, [id]);
        return rows[0] === undefined ? undefined : toMessage(rows[0]);
      }),
    create: (body) => guarded(db, () => createMessage(store, body)),
    replace: (id, body, ifVersion) => guarded(db, () => replaceMessage(store, id, body, ifVersion)),
    delete: (id, ifVersion) => guarded(db, () => deleteMessage(store, id, ifVersion)),
    async ping() {
      try {
        await db.query("select 1");
        return true;
      } catch {
        return false;
      }
    },
    close: () => db.close(),
  };
}

/** Runs a statement, turning a lost database into StoreUnavailableError (503) and leaving other errors as they are. */
async function guarded<T>(db: SqlDatabase, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (db.isUnavailable(err))
      throw new StoreUnavailableError(err instanceof Error ? err.message : String(err), { cause: err });
    throw err;
  }
}

/**
 * Counts a change in what the store holds, or throws StoreFullError and writes nothing (the transaction rolls back).
 */
async function account(
  store: SqlStore,
  tx: Pick<SqlDatabase, "query">,
  messages: number,
  bytes: number,
): Promise<void> {
  const { maxMessages, maxBytes } = store;
  const { rows } = await tx.query(
    "update store_usage set messages = messages + $1, bytes = bytes + $2 where messages + $1 <= $3 and bytes + " +
      "$2 <= $4 returning messages",
    [messages, bytes, maxMessages, maxBytes],
  );
  if (rows.length === 0)
    throw new StoreFullError(
      `the store holds its limit of ${maxMessages} messages or ${maxBytes} bytes of message bodies`,
    );
}

async function listMessages(
  db: SqlDatabase,
  filter: Parameters<MessageStore["list"]>[0],
  page: Parameters<MessageStore["list"]>[1],
): ReturnType<MessageStore["list"]> {
  const after = page.cursor === undefined ? 0 : decodeCursor(page.cursor);
  const params: unknown[] = [after, page.limit + 1];
  let where = "seq > $1";
  if (filter.body !== undefined) {
    params.push(filter.body);
    where += " and md5(body) = md5($3) and body = $3";
  }
  const { rows } = await db.query<Row>(`select ${COLUMNS} from messages where ${where} order by seq limit $2`, params);
  if (rows.length <= page.limit) return { messages: rows.map(toMessage) };
  const shown = rows.slice(0, page.limit);
  return { messages: shown.map(toMessage), next: encodeCursor(Number(shown.at(-1)?.seq)) };
}

async function createMessage(store: SqlStore, body: string): Promise<StoredMessage> {
  const { db } = store;
  const bytes = Buffer.byteLength(body);
  await db.ensureRoom?.(bytes);
  // The id is chosen before the transaction, so that a create whose COMMIT went unanswered can be done again
  // under it: its unique index makes a second insert wait for the first and fail if that one committed.
  const id = randomUUID();
  const insert = () =>
    db.transaction(async (tx) => {
      await account(store, tx, 1, bytes);
      const { rows } = await tx.query<Row>(
        `insert into messages (id, body, bytes) values ($1, $2, $3) returning ${COLUMNS}`,
        [id, body, bytes],
      );
      return toMessage(rows[0] as Row);
    });
  try {
    return await insert();
  } catch (err) {
    if (!(err instanceof CommitOutcomeUnknown)) throw err;
    return settleCreate(db, id, insert, err);
  }
}

async function replaceMessage(
  store: SqlStore,
  id: string,
  body: string,
  ifVersion: number | undefined,
): ReturnType<MessageStore["replace"]> {
  if (!UUID.test(id)) return { missing: true } as const;
  // Every replace writes the whole body anew, whatever it replaces; a delete is always let through, to make room.
  await store.db.ensureRoom?.(Buffer.byteLength(body));
  return store.db.transaction(async (tx) => {
    const existing = await lockForWrite(tx, id, ifVersion);
    if (!("bytes" in existing)) return existing;
    const bytes = Buffer.byteLength(body);
    await account(store, tx, 0, bytes - Number(existing.bytes));
    const updated = await tx.query<Row>(
      `update messages set body = $2, bytes = $3, version = version + 1 where id = $1 returning ${COLUMNS}`,
      [id, body, bytes],
    );
    return { ok: toMessage(updated.rows[0] as Row) };
  });
}

async function deleteMessage(
  store: SqlStore,
  id: string,
  ifVersion: number | undefined,
): ReturnType<MessageStore["delete"]> {
  if (!UUID.test(id)) return { missing: true } as const;
  return store.db.transaction(async (tx) => {
    const existing = await lockForWrite(tx, id, ifVersion);
    if (!("bytes" in existing)) return existing;
    await tx.query("delete from messages where id = $1", [id]);
    await account(store, tx, -1, -Number(existing.bytes));
    return { ok: true } as const;
  });
}

/**
 * A create whose COMMIT went unanswered is never answered as failed if it committed (a client that retries as told
 * would store it twice): it is done again under the same id until the database answers, within OUTCOME_WAIT_MS. A
 * unique violation on the id says the first one committed (it is read back); success says it had not, and has now.
 * A database away for longer leaves the outcome unknown: the first error is thrown (503).
 */
async function settleCreate(
  db: SqlDatabase,
  id: string,
  insert: () => Promise<StoredMessage>,
  lost: CommitOutcomeUnknown,
): Promise<StoredMessage> {
  const until = performance.now() + OUTCOME_WAIT_MS;
  for (;;) {
    try {
      return await insert();
    } catch (err) {
      if ((err as { code?: unknown }).code === UNIQUE_VIOLATION) {
        const { rows } = await db.query<Row>(`select ${COLUMNS} from messages where id = $1`, [id]);
        if (rows[0] !== undefined) return toMessage(rows[0]);
        throw err;
      }
      if (!db.isUnavailable(err) || performance.now() + OUTCOME_RETRY_MS > until)
        throw db.isUnavailable(err) ? lost : err;
      await new Promise((resolve) => setTimeout(resolve, OUTCOME_RETRY_MS));
    }
  }
}
