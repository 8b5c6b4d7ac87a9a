// Opens the message store a URL names: memory:, pglite:DIR (embedded and durable), or postgres://... (a server shared
// by replicas). Migrations run before the store is returned; a database that cannot be reached is an error here.
import { openEmbedded } from "./embedded-store.js";
import { CommitOutcomeUnknown, createSqlStore, migrate, type SqlDatabase } from "./sql-store.js";
import { createMemoryStore, StoreUnavailableError, type MessageStore, type StoreLimits } from "./store.js";

export interface OpenStoreOptions {
  limits?: StoreLimits;
  /** Connections the PostgreSQL pool may hold; default 10. */
  poolSize?: number;
}

/** The store URL with any password replaced, fit for a log line or an error. */
export function redactStoreUrl(url: string): string {
  try {
    const u = new URL(url);
    // "***" survives URL encoding as it is (a "<password>" would print as %3Cpassword%3E).
    if (u.password !== "") u.password = "***";
    return u.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, "//<credentials>@");
  }
}

export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<MessageStore> {
  if (url === "memory:") return createMemoryStore(options.limits);
  if (url.startsWith("pglite:")) return openEmbedded(url.slice("pglite:".length), options.limits);
  if (url.startsWith("postgres://") || url.startsWith("postgresql://")) return openPostgres(url, options);
  throw new RangeError(`store ${redactStoreUrl(url)}: expected memory:, pglite:DIR or postgres://USER@HOST:PORT/DB`);
}

/** Codes that mean the server is gone or not accepting connections now, not that a statement was wrong. */
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "57P01",
  "57P02",
  "57P03",
  "08000",
  "08001",
  "08003",
  "08004",
  "08006",
]);

async function openPostgres(url: string, options: OpenStoreOptions): Promise<MessageStore> {
  const { default: pg } = await import("pg");
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: 2000,
    idleTimeoutMillis: 10_000,
  });
  // An idle connection the server drops (a restart) errors on the pool: without a listener that ends the process.
  pool.on("error", () => undefined);
  const isUnavailable = (err: unknown) => {
    if (err instanceof CommitOutcomeUnknown) return true;
    const e = err as { code?: unknown; message?: unknown };
    return (
      (typeof e.code === "string" && UNAVAILABLE_CODES.has(e.code)) ||
      /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/.test(
        String(e.message),
      )
    );
  };
  const db: SqlDatabase = {
    query: async <R>(sql: string, params: readonly unknown[] = []) => ({
      rows: (await pool.query(sql, [...params])).rows as R[],
    }),
    async transaction(work) {
      const client = await pool.connect();
      // The pool listens for errors only on idle connections: one lost while checked out here would otherwise be
      // an uncaught error. The statement under way fails, and is reported through it.
      const onError = () => undefined;
      client.on("error", onError);
      let broken: unknown;
      try {
        await client.query("begin");
        const result = await work({
          query: async <R>(sql: string, params: readonly unknown[] = []) => ({
            rows: (await client.query(sql, [...params])).rows as R[],
          }),
        });
        try {
          await client.query("commit");
        } catch (err) {
          // Sent, and the connection lost before its answer: the server may have committed.
          throw isUnavailable(err) ? new CommitOutcomeUnknown(err) : err;
        }
        return result;
      } catch (err) {
        broken = err;
        if (!(err instanceof CommitOutcomeUnknown)) await client.query("rollback").catch(() => undefined);
        throw err;
      } finally {
        // A connection that failed mid-transaction is not given back to the pool.
        client.off("error", onError);
        client.release(broken !== undefined && isUnavailable(broken) ? (broken as Error) : undefined);
      }
    },
    close: () => pool.end(),
    isUnavailable,
  };
  try {
    await migrate(db);
  } catch (err) {
    await pool.end().catch(() => undefined);
    const reason = err instanceof Error ? err.message : String(err);
    throw new StoreUnavailableError(`the store ${redactStoreUrl(url)} cannot be used: ${reason}`, { cause: err });
  }
  return createSqlStore(db, options.limits);
}
