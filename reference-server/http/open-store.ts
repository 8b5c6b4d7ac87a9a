// Opens the message store a URL names: memory:, pglite:DIR (embedded and durable), or postgres://... (a server shared
// by replicas). Migrations run before the store is returned; a database that cannot be reached is an error here.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createSqlStore, migrate, type SqlDatabase } from "./sql-store.js";
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
  if (url.startsWith("pglite:")) return openEmbedded(url.slice("pglite:".length), options);
  if (url.startsWith("postgres://") || url.startsWith("postgresql://")) return openPostgres(url, options);
  throw new RangeError(`store ${redactStoreUrl(url)}: expected memory:, pglite:DIR or postgres://USER@HOST:PORT/DB`);
}

/** Codes that mean the server is gone or not accepting connections now, not that a statement was wrong. */
const UNAVAILABLE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EHOSTUNREACH", "57P01", "57P02", "57P03", "08000", "08001", "08003", "08004", "08006"]);

async function openPostgres(url: string, options: OpenStoreOptions): Promise<MessageStore> {
  const { default: pg } = await import("pg");
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10, connectionTimeoutMillis: 2000, idleTimeoutMillis: 10_000 });
  // An idle connection the server drops (a restart) errors on the pool: without a listener that ends the process.
  pool.on("error", () => undefined);
  const isUnavailable = (err: unknown) => {
    const e = err as { code?: unknown; message?: unknown };
    return (typeof e.code === "string" && UNAVAILABLE_CODES.has(e.code)) || /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/.test(String(e.message));
  };
  const db: SqlDatabase = {
    query: async <R>(sql: string, params: readonly unknown[] = []) => ({ rows: (await pool.query(sql, [...params])).rows as R[] }),
    async transaction(work) {
      const client = await pool.connect();
      // The pool listens for errors only on idle connections: one lost while checked out here would otherwise be
      // an uncaught error. The statement under way fails, and is reported through it.
      const onError = () => undefined;
      client.on("error", onError);
      let broken: unknown;
      try {
        await client.query("begin");
        const result = await work({ query: async <R>(sql: string, params: readonly unknown[] = []) => ({ rows: (await client.query(sql, [...params])).rows as R[] }) });
        await client.query("commit");
        return result;
      } catch (err) {
        broken = err;
        await client.query("rollback").catch(() => undefined);
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

async function openEmbedded(dir: string, options: OpenStoreOptions): Promise<MessageStore> {
  const dataDir = resolve(dir);
  mkdirSync(dataDir, { recursive: true });
  const releaseLock = lockDataDir(dataDir);
  try {
    const { PGlite } = await import("@electric-sql/pglite");
    const pglite = await PGlite.create(join(dataDir, "pgdata"));
    const db: SqlDatabase = {
      query: async <R>(sql: string, params: readonly unknown[] = []) => ({ rows: (await pglite.query<R>(sql, [...params])).rows }),
      transaction: (work) => pglite.transaction((tx) => work({ query: async <R>(sql: string, params: readonly unknown[] = []) => ({ rows: (await tx.query<R>(sql, [...params])).rows }) })),
      async close() {
        await pglite.close();
        releaseLock();
      },
      // In the process: it cannot be unreachable, only broken.
      isUnavailable: () => false,
    };
    await migrate(db);
    return createSqlStore(db, options.limits);
  } catch (err) {
    releaseLock();
    throw err;
  }
}

/**
 * One process at a time may open an embedded store: a second would corrupt it. The lock file names its holder;
 * one left by a process that died (SIGKILL) is taken over.
 */
function lockDataDir(dataDir: string): () => void {
  const file = join(dataDir, "example-conformance.lock");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: "wx" });
      return () => rmSync(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const holder = Number(readFileSync(file, "utf8"));
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && alive(holder)) {
        throw new RangeError(`the data directory ${dataDir} is in use by process ${holder}; give each server its own --data-dir, or share a PostgreSQL server (--store postgres://...)`);
      }
      rmSync(file, { force: true });
    }
  }
  throw new RangeError(`the data directory ${dataDir} could not be locked`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
